"""Routing with a guarantee: per criterion, the lowest confidence threshold whose kept values agree with the
supervisors at the rubric's target with the rubric's risk, certified from the random audit's pairs only.

It reads the human reference (reviews), so it stands above the kernel; the thresholds it certifies are stored in
qa (`qa.models.CertifiedThreshold`), which the judging's routing reads without knowing where they came from."""
