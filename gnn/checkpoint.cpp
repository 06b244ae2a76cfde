#include "dgnn/gnn/checkpoint.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/atomic_write.hpp"

namespace dgnn {

namespace {
constexpr char kMagic[8] = {'D', 'G', 'N', 'N', 'C', 'K', 'P', 'T'};
// Version 2 ends with the CRC-32 (zlib's) of everything after the version field: the header's
// length and text, then the tensors. Version 1 had no checksum; it is still read.
constexpr uint32_t kVersion = 2;

uint32_t crc_of(uint32_t crc, const void* p, size_t n) {
  const auto* b = static_cast<const Bytef*>(p);
  while (n > 0) {  // zlib takes 32-bit lengths
    const uInt chunk = uInt(std::min<size_t>(n, size_t(1) << 30));
    crc = uint32_t(crc32(crc, b, chunk));
    b += chunk;
    n -= chunk;
  }
  return crc;
}
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
  uint32_t crc = crc_of(crc_of(0, &len, 8), text.data(), text.size());
  for (auto& [name, t] : tensors) {
    const Tensor host = t->to(Device::cpu);
    std::fwrite(host.data(), 4, size_t(host.numel()), out.get());
    crc = crc_of(crc, host.data(), size_t(host.numel()) * 4);
  }
  std::fwrite(&crc, 4, 1, out.get());
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
  if (version != kVersion && version != 1)
    throw InputError(path, 0,
                     "checkpoint format version " + std::to_string(version) +
                         ", this dgnn reads versions 1 and " + std::to_string(kVersion));
  if (len > (uint64_t(1) << 30)) throw InputError(path, 0, "corrupt checkpoint header");
  std::string text(len, '\0');
  in.read(text.data(), std::streamsize(len));
  uint32_t crc = crc_of(crc_of(0, &len, 8), text.data(), text.size());
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
      crc = crc_of(crc, t.data(), size_t(t.numel()) * 4);
      ck.tensors.emplace_back(entry.at("name").get<std::string>(), std::move(t));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("corrupt checkpoint header: ") + e.what());
  }
  if (version >= 2) {
    uint32_t stored = 0;
    in.read(reinterpret_cast<char*>(&stored), 4);
    if (!in) throw InputError(path, 0, "checkpoint is truncated (no checksum)");
    if (stored != crc) throw InputError(path, 0, "checkpoint is corrupt (checksum mismatch)");
  }
  if (in.peek() != std::char_traits<char>::eof())
    throw InputError(path, 0, "checkpoint has bytes after its end");
  for (const auto& [name, t] : ck.tensors)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(t.data()[i]))
        throw InputError(path, 0, "checkpoint tensor " + name + " holds NaN or infinity");
  return ck;
}

}  // namespace dgnn
