"""Validation against published measurements (``workbook validate``, catalog/validation/*.yaml).

Each file holds one scenario and the published points it is compared with; ``validate(files)``
computes every point with ``workbook.calc.compute`` and returns one :class:`Result` per point.
"""

from workbook.validation.load import DEFAULT_DIR, default_files, load_validation_file, load_validation_files
from workbook.validation.model import Point, ValidationFile
from workbook.validation.report import as_json, print_table, summary
from workbook.validation.run import Result, validate

__all__ = [
    "DEFAULT_DIR",
    "Point",
    "Result",
    "ValidationFile",
    "as_json",
    "default_files",
    "load_validation_file",
    "load_validation_files",
    "print_table",
    "summary",
    "validate",
]
