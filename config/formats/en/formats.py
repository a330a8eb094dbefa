"""English times on the 24-hour clock, as the Spanish pages write them. Django's English writes
"2:51 p.m.", and the many sentences that end on a time then end in "p.m.." (a call reviewed, a
dispute resolved, a claim held until)."""

TIME_FORMAT = "H:i"
DATETIME_FORMAT = "N j, Y, H:i"
SHORT_DATETIME_FORMAT = "m/d/Y H:i"
