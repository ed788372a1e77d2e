"""AI-infrastructure planning workbook: reference calculations and live-formula Excel output."""

__version__ = "0.1.0"
