"""Personal data in transcripts: found by Presidio's pattern recognizers and a spaCy model, replaced by
typed, numbered placeholders (see the README's "Personal data" section)."""
