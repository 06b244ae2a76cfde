# Multi-rank tests (included by tests/CMakeLists.txt when MPI is found).
dgnn_mpi_test(comm 2 3 4)
dgnn_mpi_test(rank_usage 2 3)
dgnn_mpi_test(pipeline 2 3 4)

# A rank that fails must take the job down with its message, within seconds, not hang it.
add_test(NAME "mpi: a failing rank aborts the job"
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/expect_abort.sh
          "dgnn: error: [rank 1] parts/part.1.bin: cannot open"
          ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 --oversubscribe
          $<TARGET_FILE:test_mpi> "[abort]")
set_tests_properties("mpi: a failing rank aborts the job" PROPERTIES LABELS mpi TIMEOUT 90
  PROCESSORS 3 ENVIRONMENT "${DGNN_MPI_TEST_ENV}")

# The harness itself: an assertion failing on rank 1 only must fail the job and show its report.
add_test(NAME "mpi: a failed assertion on rank 1 fails the job"
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/expect_abort.sh "---- rank 1: 1 failed assertion(s)"
          ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe
          $<TARGET_FILE:test_mpi> "[fail_on_rank_1]")
set_tests_properties("mpi: a failed assertion on rank 1 fails the job" PROPERTIES LABELS mpi
  TIMEOUT 90 PROCESSORS 2 ENVIRONMENT "${DGNN_MPI_TEST_ENV}")

add_test(NAME "mpi: an uncaught exception aborts the job"
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/expect_abort.sh
          "dgnn: error: [rank 1] uncaught exception: part file vanished"
          ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe
          $<TARGET_FILE:test_mpi> "[uncaught]")
set_tests_properties("mpi: an uncaught exception aborts the job" PROPERTIES LABELS mpi
  TIMEOUT 90 PROCESSORS 2 ENVIRONMENT "${DGNN_MPI_TEST_ENV}")
# A test case that stops on one rank (a failed REQUIRE, an exception) while the others wait in a
# collective: the harness aborts the job with the failure, instead of hanging until the timeout.
foreach(probe "stop_on_rank_1;REQUIRE( comm.rank() != 1 ) with 1 != 1"
              "throw_on_rank_1;injected by the test")
  list(GET probe 0 tag)
  list(GET probe 1 message)
  add_test(NAME "mpi: a test stopped on one rank aborts the job (${tag})"
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/expect_abort.sh "${message}"
            ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe
            $<TARGET_FILE:test_mpi> "[${tag}]")
  set_tests_properties("mpi: a test stopped on one rank aborts the job (${tag})" PROPERTIES
    LABELS mpi TIMEOUT 90 PROCESSORS 2 ENVIRONMENT "${DGNN_MPI_TEST_ENV}")
endforeach()
dgnn_mpi_test(dist 2 3 4)
# Partitioning a graph no rank holds whole: every partitioner on blocks (PT-Scotch, METIS
# gathered to rank 0, the baselines per vertex) against one process.
dgnn_mpi_test(dist_partition 2 3 4)

# The executable under mpiexec: equality with one process, and a missing part file.
add_test(NAME "mpi: dgnn train on 2 ranks (CLI)"
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/cli_dist.sh $<TARGET_FILE:dgnn_cli>)
set_tests_properties("mpi: dgnn train on 2 ranks (CLI)" PROPERTIES LABELS mpi TIMEOUT 300
  PROCESSORS 2 ENVIRONMENT "${DGNN_MPI_TEST_ENV}")
dgnn_mpi_test(tdist 2 4)
dgnn_mpi_test(rankcounter 2 3 4)
dgnn_mpi_test(mbdist 2 3 4)
dgnn_mpi_test(tnode 2 3)
dgnn_mpi_test(tsnap 2 4)
dgnn_mpi_test(tmove 2 3 4)
dgnn_mpi_test(treal 2 3 4)

# Whole temporal trainings through the executable on the real graphs shipped in datasets/ and on
# a generated awkward one: every model x strategy x snapshot mode x task (x direction x
# partitioner) on 2, 3 and 4 ranks against one process (tests/mpi/temporal_matrix.py). The
# one-process references are a fixture, computed once per graph.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(matrix_env "${DGNN_MPI_TEST_ENV};MPIEXEC=${MPIEXEC_EXECUTABLE}")
  foreach(graph awkward bitcoin-alpha collegemsg chickenpox awkward-signal)
    set(work ${CMAKE_BINARY_DIR}/temporal_matrix)
    add_test(NAME "mpi: temporal matrix references (${graph})"
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/temporal_matrix.py ref
              $<TARGET_FILE:dgnn_cli> ${work} ${graph})
    set_tests_properties("mpi: temporal matrix references (${graph})" PROPERTIES LABELS mpi
      TIMEOUT 600 FIXTURES_SETUP tmatrix_${graph} ENVIRONMENT "${matrix_env}")
    foreach(np 2 3 4)
      add_test(NAME "mpi: temporal matrix ${graph} on ${np} ranks"
        COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/temporal_matrix.py dist
                $<TARGET_FILE:dgnn_cli> ${work} ${graph} ${np})
      set_tests_properties("mpi: temporal matrix ${graph} on ${np} ranks" PROPERTIES LABELS mpi
        TIMEOUT 1200 PROCESSORS ${np} FIXTURES_REQUIRED tmatrix_${graph}
        ENVIRONMENT "${matrix_env}")
    endforeach()
  endforeach()
endif()
dgnn_mpi_test(dist_load 2 3 4)
dgnn_mpi_test(temporal_load 2 3 4)
