#include "gnn/checkpoint.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "graph/atomic_write.hpp"

namespace dgnn {

namespace {
constexpr char kMagic[8] = {'D', 'G', 'N', 'N', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;
}  // namespace

const Tensor* Checkpoint::find(const std::string& name) const {
  for (auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

void save_checkpoint(const std::string& path, const std::string& meta_json,
                     const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  nlohmann::json header;
  header["meta"] = nlohmann::json::parse(meta_json.empty() ? "{}" : meta_json);
  auto& list = header["tensors"] = nlohmann::json::array();
  for (auto& [name, t] : tensors) list.push_back({{"name", name}, {"rows", t->rows()}, {"cols", t->cols()}});
  const std::string text = header.dump();

  // Tensors are streamed one at a time (each copied to the host), not gathered in memory first.
  AtomicFile out(path);
  const uint64_t len = text.size();
  std::fwrite(kMagic, 1, 8, out.get());
  std::fwrite(&kVersion, 4, 1, out.get());
  std::fwrite(&len, 8, 1, out.get());
  std::fwrite(text.data(), 1, len, out.get());
  for (auto& [name, t] : tensors) {
    const Tensor host = t->to(Device::cpu);
    std::fwrite(host.data(), 4, size_t(host.numel()), out.get());
  }
  out.commit();
}

Checkpoint load_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open checkpoint (" + std::strerror(errno) + ")");
  char magic[8] = {};
  uint32_t version = 0;
  uint64_t len = 0;
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(&version), 4);
  in.read(reinterpret_cast<char*>(&len), 8);
  if (!in || std::memcmp(magic, kMagic, 8) != 0)
    throw InputError(path, 0, "not a dgnn checkpoint (bad magic)");
  if (version != kVersion)
    throw InputError(path, 0, "checkpoint format version " + std::to_string(version) +
                                  ", this dgnn reads version " + std::to_string(kVersion));
  if (len > (uint64_t(1) << 30)) throw InputError(path, 0, "corrupt checkpoint header");
  std::string text(len, '\0');
  in.read(text.data(), std::streamsize(len));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("corrupt checkpoint header: ") + e.what());
  }
  Checkpoint ck;
  try {
    ck.meta_json = header.value("meta", nlohmann::json::object()).dump();
    for (auto& entry : header.at("tensors")) {
      const int64_t rows = entry.at("rows"), cols = entry.at("cols");
      if (rows < 0 || cols < 0 || rows * cols > (int64_t(1) << 40))
        throw InputError(path, 0, "corrupt tensor shape in checkpoint");
      Tensor t(rows, cols);
      in.read(reinterpret_cast<char*>(t.data()), std::streamsize(t.numel() * 4));
      if (!in) throw InputError(path, 0, "checkpoint is truncated");
      ck.tensors.emplace_back(entry.at("name").get<std::string>(), std::move(t));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("corrupt checkpoint header: ") + e.what());
  }
  return ck;
}

}  // namespace dgnn
