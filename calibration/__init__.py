"""Calibration sessions: supervisors score the same calls blind, the QA lead closes
the session, reads how far they sit from each other and from the judge, and
records agreed values, the best human reference Veredicto has."""
