// The `dgnn` command: subcommands register themselves (cli/commands.hpp); this is the one place
// that catches errors, prints them as one line, and exits non-zero.
#include <cstdio>
#include <exception>
#include <new>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "dgnn_config.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dgnn " DGNN_VERSION ": graph neural network training on static and dynamic graphs",
               "dgnn"};
  app.set_version_flag("--version", DGNN_VERSION);
  app.require_subcommand(1);
  dgnn::cli::register_train(app);
  dgnn::cli::register_info(app);
  dgnn::cli::register_generate(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const dgnn::Error& e) {
    std::fprintf(stderr, "dgnn: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "dgnn: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dgnn: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
