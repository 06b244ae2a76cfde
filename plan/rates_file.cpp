// `dgnn plan --rates FILE`: reading and writing the rates a plan takes instead of timing them
// (rates_file.hpp). Every field is checked, so that a typing error in a hand-written file is a
// message naming it, not a field silently left at its default.
#include "dgnn/plan/rates_file.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"

namespace dgnn::perf {

namespace {

using nlohmann::json;

// Reads one file's fields, each error naming the file and the field's path in it.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw OptionError("--rates " + file_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  // A number in [lo, hi] (lo itself excluded when `open_lo`).
  double number(const json& v, const std::string& where, double lo, bool open_lo,
                double hi = INFINITY) const {
    if (!v.is_number()) fail(where, "expected a number, got " + v.dump());
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || (open_lo && x == lo) || x > hi)
      fail(where, "expected a finite number " + std::string(open_lo ? "> " : ">= ") +
                      fmt_double(lo) + (std::isfinite(hi) ? " and <= " + fmt_double(hi) : "") +
                      ", got " + v.dump());
    return x;
  }
  double rate(const json& v, const std::string& where) const { return number(v, where, 0, true); }

  int whole(const json& v, const std::string& where, int hi) const {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > hi)
      fail(where, "expected a whole number from 1 to " + std::to_string(hi) + ", got " + v.dump());
    return int(v.get<int64_t>());
  }

  // "16" (one integer) or "32x16" (two), each >= 1.
  int64_t key_int(const std::string& s, const std::string& where) const {
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || end != s.data() + s.size() || x < 1)
      fail(where, "expected a key of whole numbers >= 1, got \"" + s + "\"");
    return x;
  }
  std::pair<int64_t, int64_t> key_pair(const std::string& s, const std::string& where) const {
    const size_t x = s.find('x');
    if (x == std::string::npos) fail(where, "expected a key \"AxB\", got \"" + s + "\"");
    return {key_int(s.substr(0, x), where), key_int(s.substr(x + 1), where)};
  }

  const json& object(const json& v, const std::string& where) const {
    if (!v.is_object()) fail(where, "expected a JSON object, got " + v.dump());
    return v;
  }
  void only(const json& v, const std::string& where, const std::set<std::string>& known) const {
    for (auto& [k, x] : v.items())
      if (!known.count(k)) {
        std::string all;
        for (const std::string& n : known) all += (all.empty() ? "" : ", ") + n;
        fail(where, "unknown field \"" + k + "\" (expected " + all + ")");
      }
  }

  // A number for every count, or an object of counts (keys) to numbers.
  std::map<int, double> by_count(const json& v, const std::string& where, double lo,
                                 bool open_lo) const {
    std::map<int, double> m;
    if (v.is_number()) {
      m[1] = number(v, where, lo, open_lo);
      return m;
    }
    if (!v.is_object() || v.empty())
      fail(where, "expected a number, or an object of counts to numbers, got " + v.dump());
    for (auto& [k, x] : v.items()) {
      const int64_t n = key_int(k, where);
      if (n > (1 << 24)) fail(where, "count " + k + " is past 2^24");
      m[int(n)] = number(x, where + "." + k, lo, open_lo);
    }
    return m;
  }

  Rates entry(const json& e, const std::string& where) const {
    object(e, where);
    only(e, where,
         {"threads", "copies", "spmm", "gemm_fwd", "gemm_bwd", "elementwise", "sync_s",
          "attention_fwd", "attention_bwd", "lstm_fwd", "lstm_bwd", "gru_fwd", "gru_bwd",
          "pair_fwd", "pair_bwd", "gather"});
    for (const char* k : {"spmm", "gemm_fwd", "gemm_bwd", "elementwise"})
      if (!e.contains(k)) fail(where, std::string("missing \"") + k + "\"");
    Rates r;
    auto map = [&](const char* name, auto& into, auto key) {
      if (!e.contains(name)) return;
      const std::string w = where + "." + name;
      const json& m = object(e.at(name), w);
      if (m.empty()) fail(w, "no shape given");
      for (auto& [k, v] : m.items()) into[key(k, w)] = rate(v, w + "." + k);
    };
    auto width = [&](const std::string& k, const std::string& w) { return key_int(k, w); };
    auto pair = [&](const std::string& k, const std::string& w) { return key_pair(k, w); };
    map("spmm", r.spmm, width);
    map("gemm_fwd", r.gemm_fwd, pair);
    map("gemm_bwd", r.gemm_bwd, pair);
    map("attention_fwd", r.attention_fwd, pair);
    map("attention_bwd", r.attention_bwd, pair);
    r.elementwise = rate(e.at("elementwise"), where + ".elementwise");
    if (e.contains("sync_s")) r.sync_s = number(e.at("sync_s"), where + ".sync_s", 0, false);
    // Fused ops: 0 (or absent) is "not timed", estimated from the element-wise rate.
    for (auto [name, field] : {std::pair{"lstm_fwd", &r.lstm_fwd},
                               {"lstm_bwd", &r.lstm_bwd},
                               {"gru_fwd", &r.gru_fwd},
                               {"gru_bwd", &r.gru_bwd},
                               {"pair_fwd", &r.pair_fwd},
                               {"pair_bwd", &r.pair_bwd},
                               {"gather", &r.gather}})
      if (e.contains(name)) *field = number(e.at(name), where + "." + name, 0, false);
    return r;
  }

 private:
  std::string file_;
};

template <class Map, class Key>
double nearest_count(const Map& m, Key key, double none) {
  if (m.empty()) return none;
  auto it = m.lower_bound(key);
  return it == m.end() ? std::prev(it)->second : it->second;
}

json entry_json(const Rates& r) {
  json j;
  for (auto& [w, v] : r.spmm) j["spmm"][std::to_string(w)] = v;
  auto shapes = [&](const char* name, const auto& m) {
    for (auto& [s, v] : m) j[name][std::to_string(s.first) + "x" + std::to_string(s.second)] = v;
  };
  shapes("gemm_fwd", r.gemm_fwd);
  shapes("gemm_bwd", r.gemm_bwd);
  shapes("attention_fwd", r.attention_fwd);
  shapes("attention_bwd", r.attention_bwd);
  j["elementwise"] = r.elementwise;
  j["sync_s"] = r.sync_s;
  for (auto [name, v] : {std::pair{"lstm_fwd", r.lstm_fwd},
                         {"lstm_bwd", r.lstm_bwd},
                         {"gru_fwd", r.gru_fwd},
                         {"gru_bwd", r.gru_bwd},
                         {"pair_fwd", r.pair_fwd},
                         {"pair_bwd", r.pair_bwd},
                         {"gather", r.gather}})
    if (v > 0) j[name] = v;
  return j;
}

}  // namespace

Rates GivenRates::at(int threads, int copies) const {
  auto it = entries.find({threads, copies});
  if (it == entries.end() && !fallback) {
    std::string have;
    for (auto& [tc, r] : entries)
      have +=
          (have.empty() ? "" : ", ") + std::to_string(tc.first) + " x " + std::to_string(tc.second);
    throw OptionError("--rates " + file + ": no rates for " + std::to_string(threads) + " thread" +
                      (threads == 1 ? "" : "s") + " with " + std::to_string(copies) + " cop" +
                      (copies == 1 ? "y" : "ies") + " at once (it has threads x copies: " + have +
                      "; add that entry, or one without \"threads\" and \"copies\" for any)");
  }
  Rates r = it != entries.end() ? it->second : *fallback;
  r.threads = threads;
  return r;
}

double GivenRates::overhead(int threads) const {
  return nearest_count(step_overhead, threads, 1.0);
}

double GivenRates::process_sync(int procs) const {
  return nearest_count(process_sync_s, procs, 0.0);
}

GivenRates read_rates_file(const std::string& file) {
  const Reader rd(file);
  if (std::filesystem::is_directory(file)) rd.fail("", "is a directory (expected a JSON file)");
  std::ifstream in(file);
  if (!in) rd.fail("", "cannot be read (no such file, or no permission)");
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) rd.fail("", "is not JSON");
  rd.object(j, "");
  rd.only(j, "",
          {"note", "cores", "rates", "attention_factor", "step_overhead", "process_sync_s",
           "pairs_per_s", "pair_draw_fixed"});
  GivenRates g;
  g.file = file;
  if (j.contains("cores")) g.cores = rd.whole(j.at("cores"), "cores", 1 << 24);
  if (!j.contains("rates") || !j.at("rates").is_array() || j.at("rates").empty())
    rd.fail("rates", "expected an array of one or more entries of kernel rates");
  const json& list = j.at("rates");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "rates[" + std::to_string(i) + "]";
    const json& e = list[i];
    Rates r = rd.entry(e, where);
    if (!e.contains("threads")) {
      if (e.contains("copies")) rd.fail(where, "\"copies\" without \"threads\"");
      if (g.fallback) rd.fail(where, "a second entry without \"threads\"");
      g.fallback = r;
      continue;
    }
    const int t = rd.whole(e.at("threads"), where + ".threads", 1 << 16);
    const int c = e.contains("copies") ? rd.whole(e.at("copies"), where + ".copies", 1 << 24) : 1;
    r.threads = t;
    if (!g.entries.emplace(std::pair{t, c}, r).second)
      rd.fail(where, "a second entry for " + std::to_string(t) + " threads x " + std::to_string(c) +
                         " copies");
  }
  if (j.contains("attention_factor"))
    g.attention_factor = rd.number(j.at("attention_factor"), "attention_factor", 0, true);
  if (j.contains("step_overhead"))
    g.step_overhead = rd.by_count(j.at("step_overhead"), "step_overhead", 0, true);
  if (j.contains("process_sync_s"))
    g.process_sync_s = rd.by_count(j.at("process_sync_s"), "process_sync_s", 0, false);
  if (j.contains("pairs_per_s"))
    g.pairs_per_s = rd.number(j.at("pairs_per_s"), "pairs_per_s", 0, false);
  if (j.contains("pair_draw_fixed"))
    g.pair_draw_fixed = rd.number(j.at("pair_draw_fixed"), "pair_draw_fixed", 0, false, 1);
  return g;
}

std::string rates_file_text(const GivenRates& g) {
  json j;
  if (g.cores > 0) j["cores"] = g.cores;
  j["rates"] = json::array();
  for (auto& [tc, r] : g.entries) {
    json e = {{"threads", tc.first}, {"copies", tc.second}};
    e.update(entry_json(r));
    j["rates"].push_back(e);
  }
  if (g.fallback) j["rates"].push_back(entry_json(*g.fallback));
  j["attention_factor"] = g.attention_factor;
  for (auto& [n, v] : g.step_overhead) j["step_overhead"][std::to_string(n)] = v;
  for (auto& [n, v] : g.process_sync_s) j["process_sync_s"][std::to_string(n)] = v;
  if (g.pairs_per_s > 0) {
    j["pairs_per_s"] = g.pairs_per_s;
    j["pair_draw_fixed"] = g.pair_draw_fixed;
  }
  return j.dump(1);
}

}  // namespace dgnn::perf
