"""Reports: analysis data, terminal tables (rich) and JSON."""
