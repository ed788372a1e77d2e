"""Checks over a built or edited workbook file (workbook-rules.md), usable by tests and later audits."""
