# The README's examples (every ```sh block of README.md not marked as not run), run from a
# scratch folder with the repository's datasets/ and 2 epochs each, so that they cannot rot.
# mpirun blocks run oversubscribed (and as root); without MPI they are skipped.
if(DGNN_HAVE_MPI)
  set(dgnn_readme_mpi 1)
else()
  set(dgnn_readme_mpi 0)
endif()
add_test(NAME "docs: the README's examples run from a clone"
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/readme_examples.sh $<TARGET_FILE:dgnn_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties("docs: the README's examples run from a clone" PROPERTIES LABELS cli TIMEOUT 600
  PROCESSORS 2 ENVIRONMENT "DGNN_README_MPI=${dgnn_readme_mpi}")
