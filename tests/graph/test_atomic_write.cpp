// AtomicFile: a file is replaced whole; a symbolic link is followed (the link stays, the file it
// names is replaced); a FIFO is written in place, not replaced by a plain file; a directory is
// an error naming the path; an uncommitted file leaves nothing behind.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/graph.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using Catch::Matchers::Contains;
using dgnn::test::error_of;
using dgnn::test::TempDir;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("atomic write: replaces a file whole, leaves nothing when not committed", "[io]") {
  TempDir dir;
  const std::string p = dir.write("out.txt", "old");
  write_file_atomically(p, "new");
  CHECK(slurp(p) == "new");
  {
    AtomicFile f(p);
    std::fputs("partial", f.get());
  }  // not committed
  CHECK(slurp(p) == "new");
  CHECK(std::distance(fs::directory_iterator(dir.dir()), fs::directory_iterator()) == 1);
}

TEST_CASE("atomic write: a symbolic link is followed and kept", "[io]") {
  TempDir dir;
  const std::string target = dir.write("sub/target.txt", "old");
  const std::string link = dir.path("link.txt");
  fs::create_symlink("sub/target.txt", link);  // relative to the link's folder
  write_file_atomically(link, "new");
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(slurp(target) == "new");
  // A dangling link: the file it names is created.
  const std::string dangling = dir.path("dangling.txt");
  fs::create_symlink(dir.path("sub/made.txt"), dangling);
  write_file_atomically(dangling, "made");
  CHECK(fs::is_symlink(fs::symlink_status(dangling)));
  CHECK(slurp(dir.path("sub/made.txt")) == "made");
}

TEST_CASE("atomic write: a FIFO is written in place, a directory is an error", "[io]") {
  TempDir dir;
  const std::string fifo = dir.path("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  write_file_atomically(fifo, "through the pipe");
  reader.join();
  CHECK(got == "through the pipe");
  CHECK(fs::is_fifo(fs::status(fifo)));  // not replaced by a plain file

  fs::create_directories(dir.path("adir"));
  CHECK_THAT(error_of<IoError>([&] { write_file_atomically(dir.path("adir"), "x"); }),
             Contains("adir: cannot write: it is a directory"));
}

TEST_CASE("atomic directory write: only plain files of ours are replaced; links are followed",
          "[io]") {
  TempDir dir;
  auto ours = [](const std::string& name) { return name == "a.txt" || name == "b.txt"; };
  auto fill = [](const std::string& tmp) { std::ofstream(tmp + "/a.txt") << "new"; };
  // A folder that holds our names as plain files is ours to replace.
  const std::string out = dir.path("out");
  dir.write("out/a.txt", "old");
  dir.write("out/b.txt", "old");
  write_dir_atomically(out, "dataset", ours, 1, fill);
  CHECK(slurp(out + "/a.txt") == "new");
  CHECK_FALSE(fs::exists(out + "/b.txt"));
  // A folder named like one of our files holds someone else's files: refused, left intact.
  const std::string user = dir.path("user");
  dir.write("user/a.txt/precious.txt", "keep");
  CHECK_THAT(error_of<IoError>([&] { write_dir_atomically(user, "dataset", ours, 1, fill); }),
             Contains("refusing to replace a directory that holds 'a.txt'"));
  CHECK(slurp(user + "/a.txt/precious.txt") == "keep");
  // A link to a folder: the folder is written, the link stays a link.
  fs::create_symlink(out, dir.path("link"));
  write_dir_atomically(dir.path("link"), "dataset", ours, 2,
                       [](const std::string& tmp) { std::ofstream(tmp + "/b.txt") << "via"; });
  CHECK(fs::is_symlink(fs::symlink_status(dir.path("link"))));
  CHECK(slurp(out + "/b.txt") == "via");
}

TEST_CASE("atomic directory write with a marker: a folder of our names without it is refused",
          "[io]") {
  TempDir dir;
  auto ours = [](const std::string& name) { return name == "a.txt" || name == "mark"; };
  auto fill = [](const std::string& tmp) {
    std::ofstream(tmp + "/a.txt") << "new";
    std::ofstream(tmp + "/mark") << "";
  };
  // A user's copy of a dataset: our file names, no marker. Refused, intact; --force replaces it.
  const std::string copy = dir.path("copy");
  dir.write("copy/a.txt", "precious");
  CHECK_THAT(
      error_of<IoError>([&] { write_dir_atomically(copy, "dataset", ours, 1, fill, "mark"); }),
      Contains("did not write (it has no mark)") && Contains("--force"));
  CHECK(slurp(copy + "/a.txt") == "precious");
  write_dir_atomically(copy, "dataset", ours, 1, fill, "mark", true);
  CHECK(slurp(copy + "/a.txt") == "new");
  // Written by us (marked): replaced; an empty folder and a new one are fine.
  write_dir_atomically(copy, "dataset", ours, 2, fill, "mark");
  fs::create_directories(dir.path("empty"));
  write_dir_atomically(dir.path("empty"), "dataset", ours, 3, fill, "mark");
  write_dir_atomically(dir.path("fresh"), "dataset", ours, 4, fill, "mark");
  CHECK(fs::exists(dir.path("fresh") + "/mark"));
}

TEST_CASE("atomic write: a file this process read is never overwritten, by any of its names",
          "[io]") {
  TempDir dir;
  const std::string edges = dir.write("edges.txt", "0 1\n1 2\n");
  const std::string hard = dir.path("hard.txt"), soft = dir.path("soft.txt");
  fs::create_hard_link(edges, hard);
  fs::create_symlink(edges, soft);
  const std::string other = dir.write("other.txt", "x");
  (void)read_file(edges);  // now an input of this process
  for (const std::string& name : {edges, hard, soft}) {
    INFO(name);
    CHECK_THAT(error_of<IoError>([&] { AtomicFile f(name); }), Contains("refusing to write over"));
    CHECK_THAT(error_of<IoError>([&] { LineLog(name).line("{}"); }),
               Contains("refusing to write over"));
  }
  CHECK(slurp(edges) == "0 1\n1 2\n");
  // A file that was not read is an output like any other.
  write_file_atomically(other, "y");
  CHECK(slurp(other) == "y");
}
