"""Scenario format: one YAML file names a model and a GPU and gives the plan's inputs.

Every input has a default, a unit (in its name or description) and a range. Values left out
(or ``null``) in ``network``, ``storage`` and ``cost`` are taken from the catalogue defaults
(``catalog/defaults.yaml``) by :func:`workbook.scenario.resolve.resolve`.
"""

from workbook.scenario.model import (
    CostInputs,
    InferenceInputs,
    NetworkInputs,
    Scenario,
    StorageInputs,
    TrainingInputs,
)
from workbook.scenario.load import load_scenario, load_scenarios

__all__ = [
    "CostInputs",
    "InferenceInputs",
    "NetworkInputs",
    "Scenario",
    "StorageInputs",
    "TrainingInputs",
    "load_scenario",
    "load_scenarios",
]
