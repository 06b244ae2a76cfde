// What `dgnn scale` does around its runs (scale_study.hpp): the launcher's command line, the
// study's configurations and folder, and the plots.
#include "dgnn/cli/scale_study.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/subprocess.hpp"
#include "dgnn/common/error.hpp"

namespace dgnn::cli {

namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+") ==
      std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string& share_dir() {
  static std::string dir;
  return dir;
}

// scale_plot.py: in the installed package's share folder (for a program of the user's linking
// dgnn::cli: cli_main passes it), next to the binary's share folder (dgnn installed; relative,
// so a moved prefix still works), else in the source tree this binary was built from.
std::string find_plot_script(const fs::path& exe, std::string* looked) {
  std::vector<fs::path> candidates;
  if (!share_dir().empty()) candidates.push_back(fs::path(share_dir()) / "scale_plot.py");
  candidates.push_back(exe.parent_path() / DGNN_PLOT_SCRIPT_REL / "scale_plot.py");
  candidates.push_back(fs::path(DGNN_SOURCE_DIR) / "scripts" / "scale_plot.py");
  for (const fs::path& p : candidates) {
    *looked += (looked->empty() ? "" : ", ") + p.lexically_normal().string();
    if (fs::is_regular_file(p)) return p.lexically_normal().string();
  }
  return "";
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Open MPI's mpiexec: --oversubscribe lets a study ask for more ranks than cores; --bind-to none
// lets each rank's OpenMP threads use the cores dgnn gives it (bound to one core each, 2 ranks of
// 8 threads on a 16-core node would share 2 cores); root needs --allow-run-as-root.
std::string default_launcher() {
  std::string t = "mpiexec --oversubscribe --bind-to none";
  if (::geteuid() == 0) t += " --allow-run-as-root";
  return t + " -n {ranks}";
}

std::vector<std::string> launcher_argv(const std::string& tmpl, int ranks) {
  std::vector<std::string> argv;
  std::string word;
  auto flush = [&] {
    for (size_t p; (p = word.find("{ranks}")) != std::string::npos;)
      word.replace(p, 7, std::to_string(ranks));
    if (!word.empty()) argv.push_back(word);
    word.clear();
  };
  for (char c : tmpl) {
    if (c == ' ' || c == '\t')
      flush();
    else
      word += c;
  }
  flush();
  return argv;
}

std::vector<ScaleConfig> study_configs(const std::vector<int>& ranks,
                                       const std::vector<std::string>& strategies,
                                       const std::vector<std::string>& partitioners) {
  std::vector<ScaleConfig> configs;
  for (int r : ranks)
    for (const std::string& s : strategies) {
      if (s == "hybrid" && (r < 4 || r % 2 != 0)) continue;  // r/2 stages x 2 parts
      if (s == "snapshot") {
        configs.push_back({r, s, "-"});
        continue;
      }
      for (const std::string& p : partitioners) configs.push_back({r, s, p});
    }
  return configs;
}

void check_study_folder(const std::string& out_dir, const std::string& graph) {
  const fs::path out = out_dir;
  std::error_code ec;
  if (fs::exists(out / "results.csv") && !fs::is_regular_file(out / "results.csv"))
    throw OptionError("--out " + out_dir + ": results.csv there is not a file");
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw OptionError("--out " + out_dir + ": exists and is not a folder");
  if (!graph.empty() && fs::is_directory(graph) &&
      fs::weakly_canonical(fs::absolute(out), ec) == fs::weakly_canonical(fs::absolute(graph), ec))
    throw OptionError("--out " + out_dir +
                      " is the dataset folder --graph reads: give the study a "
                      "folder of its own");
  // A study writes results.csv, runs/, the plots and plot.log, replacing those of an earlier
  // study; a folder holding anything else is someone's, and its results.csv may be theirs.
  if (fs::is_directory(out, ec))
    for (const auto& entry : fs::directory_iterator(out, ec)) {
      static const std::set<std::string> ours = {"results.csv",  "runs",           "plot.log",
                                                 "epoch_ms.png", "bytes_sent.png", "speedup.png"};
      const std::string name = entry.path().filename().string();
      if (!ours.count(name))
        throw OptionError("--out " + out_dir + ": holds " + name +
                          ", which dgnn scale does not write: give a new or empty folder");
    }
}

void draw_plots(const fs::path& exe, const fs::path& out, const std::string& title) {
  std::string looked;
  const std::string script = find_plot_script(exe, &looked);
  if (script.empty()) {
    std::printf("plots skipped: scale_plot.py not found (looked in %s)\n", looked.c_str());
    return;
  }
  const std::string csv = (out / "results.csv").string();
  // Python with matplotlib: $DGNN_PYTHON, else python3 on PATH, else the system's (Debian's
  // python3-matplotlib is installed for /usr/bin/python3, which a pyenv or venv may shadow).
  std::vector<std::string> pythons;
  if (const char* p = std::getenv("DGNN_PYTHON"); p && *p) pythons.push_back(p);
  for (const char* name : {"python3", "/usr/bin/python3"}) {
    const std::string p = find_program(name);
    if (!p.empty() && std::find(pythons.begin(), pythons.end(), p) == pythons.end())
      pythons.push_back(p);
  }
  const std::string plot_log = (out / "plot.log").string();
  std::string why = "no python3 on PATH";
  for (const std::string& py : pythons) {
    ProcessResult r = run_process({py, script, csv, out.string(), "--title", title}, plot_log);
    if (r.started && r.exit_code == 0) {
      std::printf(
          "plots: %s (%s)\n", last_line_of(plot_log).c_str(),
          join({shell_quote(py), shell_quote(script), shell_quote(csv), shell_quote(out.string())},
               " ")
              .c_str());
      return;
    }
    // Exit 3: the script's "no matplotlib" (the next interpreter may have it).
    why = r.started ? last_line_of(plot_log) : r.error;
    if (!r.started || r.exit_code == 3) continue;
    break;
  }
  std::printf("plots skipped: %s; results.csv is written (to plot later: python3 %s %s %s)\n",
              why.c_str(), shell_quote(script).c_str(), shell_quote(csv).c_str(),
              shell_quote(out.string()).c_str());
}

void set_share_dir(const std::string& dir) { share_dir() = dir; }
const std::string& get_share_dir() { return share_dir(); }

}  // namespace dgnn::cli
