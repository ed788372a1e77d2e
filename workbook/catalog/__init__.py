"""The catalogue: GPUs, model architectures and default values (catalog/*.yaml)."""

from workbook.catalog.load import DEFAULT_DIR, load_catalog
from workbook.catalog.models import Catalog, DefaultValue, Defaults, Gpu, Model

__all__ = ["DEFAULT_DIR", "Catalog", "DefaultValue", "Defaults", "Gpu", "Model", "load_catalog"]
