"""The planner: plan requests (catalog/requests/*.yaml) answered with the early estimate of spec 17.9.4,
a search over training layouts, a recommendation with alternatives and rejections, and the plan
workbook (docs/planner.md). Modules: request, candidates, screen, search, estimate, advice, plan,
report, book."""
