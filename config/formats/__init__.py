"""The site's own date and time formats, over Django's per language (FORMAT_MODULE_PATH)."""
