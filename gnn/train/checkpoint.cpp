#include "dgnn/gnn/train/checkpoint.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

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
  for (auto& [name, t] : tensors)
    list.push_back({{"name", name}, {"rows", t->rows()}, {"cols", t->cols()}});
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

namespace {

// Little-endian fixed-width fields at `at` of `bytes` (bounds already checked by the caller).
template <class T>
T field(const std::vector<char>& bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

}  // namespace

namespace {

// The header's tensor list, and the bytes they take, when `bytes` holds a header of length
// `len` after the fixed fields; nullopt when it does not parse as what dgnn writes.
struct Layout {
  std::string meta;
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> shapes;
  uint64_t tensor_bytes = 0;  // UINT64_MAX: a shape no file could hold
};

constexpr size_t kFixed = 8 + 4 + 8;  // magic, version, header length

std::optional<Layout> read_layout(const std::vector<char>& bytes, uint64_t len) {
  if (len > bytes.size() - kFixed) return std::nullopt;
  try {
    const nlohmann::json header = nlohmann::json::parse(bytes.begin() + int64_t(kFixed),
                                                        bytes.begin() + int64_t(kFixed + len));
    Layout l;
    l.meta = header.value("meta", nlohmann::json::object()).dump();
    for (auto& entry : header.at("tensors")) {
      const auto& r = entry.at("rows");
      const auto& c = entry.at("cols");
      if (!r.is_number_integer() || !c.is_number_integer() || !entry.at("name").is_string())
        return std::nullopt;
      const int64_t rows = r.get<int64_t>(), cols = c.get<int64_t>();
      const uint64_t most = bytes.size() / 4;  // no tensor can hold more floats than the file
      if (rows < 0 || cols < 0 || (cols > 0 && uint64_t(rows) > most / uint64_t(cols)) ||
          l.tensor_bytes == UINT64_MAX) {
        l.tensor_bytes = UINT64_MAX;
      } else {
        l.tensor_bytes += uint64_t(rows) * uint64_t(cols) * 4;
        if (l.tensor_bytes > bytes.size()) l.tensor_bytes = UINT64_MAX;  // and cannot overflow
      }
      l.shapes.push_back({entry.at("name").get<std::string>(), {rows, cols}});
    }
    return l;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

Checkpoint load_checkpoint(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw IoError(path + ": is a directory, not a checkpoint file");
  // A FIFO or a device would block or never end: a checkpoint is a file.
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    throw IoError(path + ": not a regular file (a checkpoint is a file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open checkpoint (" + std::strerror(errno) + ")");
  // The whole file, once: nothing is allocated beyond its size, and (version 2) its checksum is
  // checked before anything in it is believed.
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  if (end < 0) throw IoError(path + ": cannot read checkpoint (not a regular file?)");
  const uint64_t size = uint64_t(end);
  in.seekg(0);
  if (size < kFixed) throw InputError(path, 0, "not a dgnn checkpoint (too short)");
  std::vector<char> bytes(size);
  in.read(bytes.data(), std::streamsize(size));
  if (!in) throw IoError(path + ": cannot read checkpoint");
  if (std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw InputError(path, 0, "not a dgnn checkpoint (bad magic)");
  const uint32_t version = field<uint32_t>(bytes, 8);
  if (version != kVersion && version != 1)
    throw InputError(path, 0,
                     "checkpoint format version " + std::to_string(version) +
                         ", this dgnn reads versions 1 and " + std::to_string(kVersion));
  const uint64_t len = field<uint64_t>(bytes, 12);
  const size_t tail = version >= 2 ? 4 : 0;  // the checksum
  if (size < kFixed + tail) throw InputError(path, 0, "checkpoint is truncated");
  const bool crc_ok =
      tail == 0 || crc_of(0, bytes.data() + 12, size - 4 - 12) == field<uint32_t>(bytes, size - 4);
  // A layout is believed only once the checksum holds; when it does not, the header may still
  // say what went wrong (a cut file, bytes appended), but nothing of it is used.
  const std::optional<Layout> layout = read_layout(bytes, len);
  const uint64_t expected =
      layout && layout->tensor_bytes != UINT64_MAX ? kFixed + len + layout->tensor_bytes + tail : 0;
  if (!crc_ok) {
    if (expected > size) throw InputError(path, 0, "checkpoint is truncated");
    if (expected > 0 && expected < size &&
        crc_of(0, bytes.data() + 12, expected - 4 - 12) == field<uint32_t>(bytes, expected - 4))
      throw InputError(path, 0, "checkpoint has bytes after its end");
    throw InputError(path, 0, "checkpoint is corrupt (checksum mismatch)");
  }
  if (!layout) throw InputError(path, 0, "corrupt checkpoint header (not the JSON dgnn writes)");
  for (const auto& [name, rc] : layout->shapes)
    if (rc.first < 0 || rc.second < 0 || layout->tensor_bytes == UINT64_MAX)
      throw InputError(path, 0, "tensor '" + name + "' of the checkpoint has an impossible shape");
  if (expected > size) throw InputError(path, 0, "checkpoint is truncated");
  if (expected < size) throw InputError(path, 0, "checkpoint has bytes after its end");
  // Format 1 predates the shared training loop: a format-1 header with the loop's record of the
  // best epoch ("best", written since format 2) is a format-2 file whose version was changed and
  // whose checksum was cut off, and nothing in it can be trusted.
  if (version == 1 && nlohmann::json::parse(layout->meta, nullptr, false).contains("best"))
    throw InputError(path, 0,
                     "checkpoint says format 1 but holds format 2's fields (its version was "
                     "changed and its checksum removed?)");
  Checkpoint ck;
  ck.meta_json = layout->meta;
  size_t at = kFixed + len;
  for (const auto& [name, rc] : layout->shapes) {
    Tensor t(rc.first, rc.second);
    if (t.numel() > 0) std::memcpy(t.data(), bytes.data() + at, size_t(t.numel()) * 4);
    at += size_t(t.numel()) * 4;
    ck.tensors.emplace_back(name, std::move(t));
  }
  for (const auto& [name, t] : ck.tensors)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(t.data()[i]))
        throw InputError(path, 0, "checkpoint tensor " + name + " holds NaN or infinity");
  return ck;
}

}  // namespace dgnn
