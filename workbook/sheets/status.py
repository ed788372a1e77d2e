"""Line items of the scenario status (Checks sheet): failures incl. input errors, flag, status code."""

ITEMS = {
    "scenario_failures_count": "={hard_failures_count}+{input_errors_count}",
    "scenario_failed_flag": "=MIN(1,{scenario_failures_count})",
    # 1 pass, 2 a hard check fails, 3 an input is in error (input errors come first)
    "status_code": "=1+MIN(1,{hard_failures_count})+MIN(1,{input_errors_count})*c_two"
    "-MIN(1,{hard_failures_count})*MIN(1,{input_errors_count})",
}
