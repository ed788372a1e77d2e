"""Exports of a built workbook for people who do not open Excel: PDF of chosen sheets."""
