"""The plan workbook's Glossary sheet (issue 23): the abbreviations a budget holder meets in the plan, in plain
words, with where each is defined. Text only."""

from __future__ import annotations

from workbook.writer.planbook import GLOSSARY, HEAD, _header
from workbook.writer.xlsx import Writer

#: (term, meaning, where it is defined)
TERMS = (
    ("GPU-hour", "One GPU rented for one hour; rent = GPUs billed x hours x price per GPU-hour.", "Cost sheet"),
    ("Price basis", "The kind of rental price: on-demand (no commitment), reserved (a 1- or 3-year commitment) "
     "or spot (interruptible).", "Cover, Hardware sheet"),
    ("Budget headroom", "Budget minus the rent committed: the larger of the rent for the run and the rent of the "
     "GPUs reserved for the whole target window. Negative = over budget.", "Cost sheet"),
    ("Switching value", "The value of one driver at which a check flips (the deadline is missed or the budget is "
     "exceeded), all else equal.", "Sensitivity sheet"),
    ("Base / Low / High", "The plan as planned (Base), and the same GPUs with the MFU, overhead factor and GPU-hour "
     "price moved by the sensitivity step against the plan (Low, the downside) or for it (High, the upside).",
     "Scenarios sheet"),
    ("Cheapest fix", "For a plan that fails a check: the change of one input that alone makes it pass (the budget, "
     "the GPU-hour price or the deadline).", "Cover"),
    ("TCO", "Total cost of ownership of buying the cluster: capex (servers, network with optics) plus opex (power "
     "with PUE, space, storage, staff, support) over the depreciation horizon.", "TCO sheet"),
    ("NPV", "Net present value: each year's cash discounted to today at the discount rate, (1 + rate)^-year. Buy "
     "and rent are compared by NPV over the same years; buying counts the hardware's residual value as an "
     "inflow.", "TCO sheet"),
    ("Capex / opex", "Capital expenditure (one-off purchases) / operating expenditure (recurring costs).",
     "TCO sheet"),
    ("Fiscal year", "The organisation's accounting year, starting in the month set on the Plan (1 = January: the "
     "calendar year); named by the calendar year it ends in (a year from October 2026 is fiscal 2027), in four "
     "fiscal quarters of three months.", "Cash Flow sheet"),
    ("Rent path / buy path", "The money month by month of renting the GPUs (the rent asked for, paid over the days "
     "rented) and of buying them instead (capex in the first month, opex every month in service, the residual value "
     "back at the end of the horizon).", "Cash Flow sheet"),
    ("PUE", "Power usage effectiveness: data-centre power over IT power (1.0 = no cooling overhead).",
     "Defaults sheet"),
    ("TP", "Tensor parallelism: each layer's matrices split over TP GPUs of one node.", "Plan sheet; spec 17.6"),
    ("PP", "Pipeline parallelism: the layers split into PP stages on different GPUs.", "Plan sheet; spec 17.6"),
    ("DP", "Data parallelism: DP copies of the model, each on its share of every batch.", "Plan sheet; spec 17.6"),
    ("CP", "Context parallelism: each sequence split over CP GPUs (long contexts).", "Plan sheet"),
    ("EP", "Expert parallelism: the experts of a mixture-of-experts model spread over EP GPUs.", "Plan sheet"),
    ("ZeRO", "Zero Redundancy Optimizer, stages 1-3: the optimizer state (1), gradients (2) and weights (3) "
     "sharded over the DP GPUs instead of copied.", "ZeRO sheet; spec 17.4.8"),
    ("Recompute", "Activation recomputation: activations dropped in the forward pass and recomputed in the "
     "backward pass, trading compute for memory (none, selective, full).", "Activations sheet; spec 17.4.6"),
    ("MFU", "Model FLOPs utilisation: the model's useful FLOPs per second over the GPUs' peak; 40-50 % is good "
     "for large training runs.", "Step Time sheet; spec 17.5.2"),
    ("TTFT", "Time to first token: from a request's arrival to its first output token (prompt processing).",
     "Inference sheet; spec 17.8"),
    ("TPOT", "Time per output token: the time between two output tokens of one request (decode speed).",
     "Inference sheet; spec 17.8"),
    ("KV cache", "The attention keys and values kept per token of every request being served.",
     "KV Cache sheet"),
)


def write_glossary(w: Writer) -> None:
    sheet = GLOSSARY
    w.title(sheet, "Glossary", "The terms and abbreviations of this plan, in plain words.")
    _header(w, sheet, ("Term", "Meaning", "Where"), (18, 100, 28))
    row = HEAD
    for term, meaning, where in TERMS:
        row += 1
        w.text(sheet, row, 0, term, "label", "label")
        w.text(sheet, row, 1, meaning, "text", "text")
        w.text(sheet, row, 2, where, "source", "source")
    w.finish_sheet(sheet, 2, row)
