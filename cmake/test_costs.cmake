# test_costs.cmake — the order CTest starts the tests in under -j (make test).
#
# CTest starts the tests with the highest COST first. Without a cost (a
# fresh clone has no Testing/Temporary/CTestCostData.txt yet) it starts them
# in the order they were added, and the longest (the client libraries, the
# scenarios) came last: the run ended with one core idle while they finished.
# Longest first, the two slots end within a few seconds of each other. The
# figures are the tests' seconds in a make test of this 2-core machine
# (docs/CHECKING.md, "How long make test takes"); only the order matters, so
# they need no care beyond that. A test not listed costs 0 and starts after
# these; after one run CTest's own measured costs take over for the tests
# left at 0.
set(JOBD_TEST_COSTS
  store_conformance_remote_pg 98
  store_conformance_remote_sqlite 98
  integration_test_bench_sh 78
  store_conformance_pg_pooled 65
  store_conformance_pg 64
  integration_test_api_events 52
  integration_test_ui_browser_sh 51
  integration_test_deb_sh 45
  clients_node_pg 34
  clients_node_sqlite 34
  integration_test_api_wait_memory 34
  integration_test_api_wait 30
  integration_test_workflow_cli_sh 27
  integration_test_model_sh 27
  integration_test_clock_catchup_sh 27
  integration_test_schedules 26
  store_conformance_sqlite 26
  scenario_pgbouncer 26
  integration_test_ops_workers 26
  clients_python_pg 25
  integration_test_worker_handlers_sh 24
  integration_test_api_http 24
  integration_test_schedule_cli 24
  clients_python_sqlite 22
  scenario_workflow_dag 20
  integration_test_sqlite_wake_sh 20
  integration_test_limits_rate 20
  scenario_three_workers 20
  integration_test_worker_trace_sh 19
  integration_test_cli_consistency_sh 17
  integration_test_ops_retention 16
  integration_test_worker_e2e 16
  scenario_store_down 15
  scenario_groups_fair 15
  integration_test_api_group_commit 15
  scenario_conn_budget 15
  integration_test_api_longpoll_wake 15
  clients_go_pg 14
  integration_test_libjobd 14
  integration_test_api_keys 14
  integration_test_retry_delay 13
  scenario_partition 13
  scenario_stop_race 13
  scenario_blackhole 13
  scenario_partition_forwarder 12
  clients_go_sqlite 12
  scenario_zombie 12
  integration_test_worker_progress_sh 11
  integration_test_worker_attempt_log_sh 11
  integration_test_backlog_cost 10
  integration_test_limits_group 10
  integration_test_libjobd_compose 10
  fuzz_fuzz_request_brief 10
  integration_test_pg_concurrency 9
  fuzz_fuzz_spec_brief 9
  fuzz_fuzz_json_brief 9
  fuzz_fuzz_cron_brief 9
  fuzz_fuzz_time_brief 9
  integration_test_limits_running 9
  integration_test_openapi_sh 9
  integration_test_log_notable_sh 9
  scenario_pg_restart 9
  integration_test_worker_remote_lease_sh 9
  scenario_kill_worker 8
  integration_test_cli_polish_sh 8
  integration_test_worker_adaptive 8
  integration_test_api_cli 8
  integration_test_pg_store 8
  integration_test_workflow_cancel_e2e_sh 7
  integration_test_search_sh 7
  integration_test_deps_e2e_sh 7
  scenario_late_claim 7
  scenario_commit_outcome 7
  clients_python_typecheck 7
  integration_test_sdnotify_sh 7
  integration_test_api_departed 7
  scenario_sqlite_crash 7
  integration_test_ui_xsite_sh 7
  integration_test_cancel_now 6
  integration_test_ops_bulk 6
  integration_test_sqlite_file_health_sh 6
  integration_test_pg_layout 6
  integration_test_due_visible_sh 6
  integration_test_numbers_sh 6
  integration_test_alloc_torture 6
  integration_test_sqlite_group_claim_pages 6
  integration_test_api_bounds 6
  integration_test_xsite_sh 6
  integration_test_ops_limits 6
  integration_test_backup_sqlite_sh 5
  integration_test_api_lease 5
  integration_test_api_embedded 5
  integration_test_worker_prefetch 5
  integration_test_api_events_rows 5
)
list(LENGTH JOBD_TEST_COSTS _n)
math(EXPR _last "${_n} - 1")
foreach(_i RANGE 0 ${_last} 2)
  math(EXPR _j "${_i} + 1")
  list(GET JOBD_TEST_COSTS ${_i} _name)
  list(GET JOBD_TEST_COSTS ${_j} _cost)
  if(TEST ${_name})
    set_tests_properties(${_name} PROPERTIES COST ${_cost})
  endif()
endforeach()
