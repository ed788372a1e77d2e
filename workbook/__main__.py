"""Allow ``python -m workbook``."""

from workbook.cli import main

raise SystemExit(main())
