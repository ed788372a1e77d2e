"""The catalogue: GPUs, model architectures, default values and step-time efficiency factors (catalog/*.yaml)."""

from workbook.catalog.load import DEFAULT_DIR, load_catalog
from workbook.catalog.models import Catalog, DefaultValue, Defaults, Gpu, GpuEfficiency, Model

__all__ = ["DEFAULT_DIR", "Catalog", "DefaultValue", "Defaults", "Gpu", "GpuEfficiency", "Model", "load_catalog"]
