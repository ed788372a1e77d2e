"""Line items of the workbook: one module per calculation module, each a mapping
``quantity name -> Excel formula template``.

Templates are plain Excel formulas with placeholders, written by hand from the spec (never
generated from the Python reference):

* ``{name}``: the cell of quantity *name* in the same scenario column (any earlier row or sheet);
* ``{training.tokens}``, ``{inference.batch}``, ``{gpu}``, ``{model}``, ...: the scenario's input
  cell on the Plan sheet (dotted scenario field path);
* ``c_<name>``: a workbook-scoped defined name of the Constants block (workbook/sheets/constants.py);
* ``gpu_ids``, ``gpu_<field>``, ``model_ids``, ``model_<field>``: defined names over the columns of
  the Hardware and Models catalogue tables; ``t_<table>_<column>``: the spec lookup tables.

No number may appear in a template except 0, 1 and -1 (workbook-rules.md rule 1).
"""
