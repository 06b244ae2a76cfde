#include "gnn/checkpoint.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

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

  // A per-process temporary name: two runs saving to the same path do not share one.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(path + ": cannot write checkpoint (" + std::strerror(errno) + ")");
    const uint64_t len = text.size();
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&kVersion), 4);
    out.write(reinterpret_cast<const char*>(&len), 8);
    out.write(text.data(), std::streamsize(len));
    for (auto& [name, t] : tensors) {
      Tensor host = t->to(Device::cpu);
      out.write(reinterpret_cast<const char*>(host.data()), std::streamsize(host.numel() * 4));
    }
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp);
      throw IoError(path + ": writing the checkpoint failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw IoError(path + ": cannot move the checkpoint into place (" + ec.message() + ")");
  }
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
