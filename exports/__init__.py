"""The bulk export for BI: scores, reviews, disputes and calibration as NDJSON or Parquet, by cursor."""
