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
  store_conformance_remote_pg 210
  store_conformance_remote_sqlite 113
  store_conformance_pg_pooled 112
  store_conformance_pg 111
  integration_test_workflow_cli_sh 102
  integration_test_bench_sh 84
  store_conformance_sqlite 69
  integration_test_ui_browser_sh 63
  scenario_pgbouncer 57
  clients_node_sqlite 52
  integration_test_deb_sh 50
  clients_node_pg 50
  scenario_store_down 46
  integration_test_api_events 44
  scenario_three_workers 42
  scenario_sqlite_crash 40
  integration_test_cli_consistency_sh 37
  integration_test_clock_catchup_sh 37
  scenario_pg_restart 34
  scenario_workflow_dag 33
  scenario_conn_budget 33
  integration_test_worker_trace_sh 32
  clients_go_sqlite 31
  integration_test_api_bulk_limits 31
  integration_test_api_wait_memory 30
  integration_test_ops_retention 30
  integration_test_model_sh 30
  integration_test_api_wait 30
  scenario_zombie 28
  integration_test_api_http 28
  integration_test_worker_handlers_sh 28
  scenario_partition 28
  scenario_late_claim 25
  scenario_groups_fair 25
  integration_test_ops_workers 25
  clients_python_pg 25
  integration_test_sqlite_wake_sh 24
  scenario_partition_forwarder 24
  integration_test_openapi_sh 23
  integration_test_schedules 23
  integration_test_workflow_cancel_e2e_sh 23
  clients_python_sqlite 22
  integration_test_deps_e2e_sh 21
  integration_test_schedule_cli 20
  integration_test_limits_rate 20
  integration_test_libjobd 19
  integration_test_api_longpoll_wake 19
  integration_test_worker_remote_lease_sh 19
  integration_test_worker_progress_sh 19
  integration_test_retry_delay 18
  integration_test_worker_attempt_log_sh 17
  scenario_stop_race 17
  scenario_blackhole 17
  integration_test_worker_e2e 16
  integration_test_ops_bulk 16
  integration_test_api_group_commit 16
  scenario_kill_worker 16
  integration_test_api_keys 15
  unit_store_file_cycles 13
  integration_test_cli_polish_sh 12
  clients_go_pg 11
  integration_test_limits_running 11
  scenario_commit_outcome 11
  integration_test_worker_user_sh 11
  integration_test_log_notable_sh 11
  integration_test_search_sh 11
  integration_test_backlog_cost 10
  integration_test_sdnotify_sh 10
  integration_test_pg_concurrency 10
  fuzz_fuzz_json_brief 10
  fuzz_fuzz_spec_brief 9
  fuzz_fuzz_request_brief 9
  fuzz_fuzz_time_brief 9
  integration_test_libjobd_compose 9
  fuzz_fuzz_cron_brief 9
  integration_test_limits_group 9
  integration_test_api_bounds 9
  integration_test_pg_store 9
  integration_test_pg_layout 5
  integration_test_xsite_sh 9
  integration_test_api_cli 8
  integration_test_worker_adaptive 8
  integration_test_api_departed 8
  scenario_pg_first_request 8
  integration_test_due_visible_sh 8
  integration_test_ui_serve_sh 7
  integration_test_sqlite_file_health_sh 7
  integration_test_ui_xsite_sh 7
  integration_test_cancel_now 7
  integration_test_api_lease 7
  integration_test_log_cli_sh 6
  integration_test_tls_proxy_sh 6
  integration_test_numbers_sh 6
  integration_test_man_sh 6
  integration_test_api_embedded 6
  integration_test_claim_presence_sh 6
  integration_test_worker_remote_replay_sh 6
  integration_test_api_events_rows 6
  integration_test_ops_limits 6
  clients_python_typecheck 6
  integration_test_alloc_torture 6
  scenario_check_history_selftest 5
  integration_test_backup_sqlite_sh 5
  integration_test_api_memory 5
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
