"""Static checks of written workbooks (Excel compatibility)."""
