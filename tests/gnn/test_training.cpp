// End-to-end training on generated graphs: accuracy well above chance for every built-in layer,
// reproducibility by seed, checkpoints that resume bit-for-bit, and parameter bookkeeping.
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/checkpoint.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

Dataset small_sbm(uint64_t seed = 3) {
  SbmConfig cfg;
  cfg.vertices = 2000;
  cfg.classes = 4;
  cfg.seed = seed;
  return generate_sbm(cfg).to_dataset();
}

struct Run {
  std::vector<double> losses;
  TrainResult result;
  std::vector<std::vector<float>> params;
};

Run train(const Dataset& data, ModelKind kind, TrainOptions opt, float dropout = 0.5f,
          int hidden = 16) {
  NodeTask task = make_node_task(data);
  GraphView graph(data.graph.in);
  StackModel model(builtin_layer(kind), {data.feature_dim, hidden, data.num_classes}, dropout);
  model.reset_parameters(opt.seed);
  SelfCommunicator comm;
  Trainer trainer(model, graph, task, comm, opt);
  Run run;
  run.result = trainer.run([&](const EpochRecord& s) { run.losses.push_back(s.loss); });
  for (auto* p : model.parameters())
    run.params.emplace_back(p->var.value().data(), p->var.value().data() + p->var.value().numel());
  return run;
}

}  // namespace

TEST_CASE("every built-in model learns a planted partition") {
  Dataset data = small_sbm();
  TrainOptions opt;
  opt.epochs = 60;
  opt.lr = 0.01f;
  opt.weight_decay = 5e-4f;
  // Chance is 1/4; the generator's defaults are tuned so that graph models clear 0.7 easily.
  for (ModelKind kind : {ModelKind::gcn, ModelKind::sage, ModelKind::gin, ModelKind::gat}) {
    INFO(model_kind_name(kind));
    Run r = train(data, kind, opt);
    CHECK(r.losses.front() > r.losses.back());
    CHECK(r.result.test_acc > 0.7);
    CHECK(r.result.best_val_acc > 0.7);
  }
}

TEST_CASE("training is reproducible: same seed, same numbers; other seed, other numbers") {
  Dataset data = small_sbm();
  TrainOptions opt;
  opt.epochs = 8;
  opt.seed = 5;
  Run a = train(data, ModelKind::sage, opt);
  Run b = train(data, ModelKind::sage, opt);
  CHECK(a.losses == b.losses);
  CHECK(a.params == b.params);
  opt.seed = 6;
  Run c = train(data, ModelKind::sage, opt);
  CHECK(a.losses != c.losses);
}

TEST_CASE("a checkpoint resumes to exactly the uninterrupted run") {
  Dataset data = small_sbm();
  const auto dir = std::filesystem::temp_directory_path() / "dgnn_test_ckpt";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "half.ckpt").string();
  for (const char* optim : {"adam", "sgd"}) {
    INFO(optim);
    TrainOptions opt;
    opt.optimizer = optim;
    opt.momentum = 0.9f;
    opt.weight_decay = 5e-4f;
    opt.seed = 9;
    opt.epochs = 12;
    Run full = train(data, ModelKind::gcn, opt);

    TrainOptions first = opt;
    first.epochs = 5;
    first.save = path;
    Run part1 = train(data, ModelKind::gcn, first);
    TrainOptions second = opt;
    second.load = path;
    Run part2 = train(data, ModelKind::gcn, second);

    REQUIRE(part1.losses.size() == 5);
    REQUIRE(part2.losses.size() == 7);
    std::vector<double> joined = part1.losses;
    joined.insert(joined.end(), part2.losses.begin(), part2.losses.end());
    CHECK(joined == full.losses);
    CHECK(part2.params == full.params);
    CHECK(part2.result.test_acc == full.result.test_acc);
    CHECK(part2.result.best_epoch == full.result.best_epoch);
  }
}

TEST_CASE("loading a checkpoint of another shape is a clear error") {
  Dataset data = small_sbm();
  const auto dir = std::filesystem::temp_directory_path() / "dgnn_test_ckpt";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "h16.ckpt").string();
  TrainOptions opt;
  opt.epochs = 1;
  opt.save = path;
  train(data, ModelKind::gcn, opt, 0.5f, 16);
  TrainOptions other;
  other.epochs = 2;
  other.load = path;
  CHECK_THROWS_WITH(train(data, ModelKind::gcn, other, 0.5f, 32),
                    Catch::Contains("layers.0.weight") && Catch::Contains("in this model"));
  CHECK_THROWS_AS(train(data, ModelKind::gcn, other, 0.5f, 32), InputError);
  std::filesystem::remove((dir / "garbage.ckpt"));
  {
    FILE* f = std::fopen((dir / "garbage.ckpt").c_str(), "w");
    std::fputs("not a checkpoint", f);
    std::fclose(f);
  }
  other.load = (dir / "garbage.ckpt").string();
  CHECK_THROWS_WITH(train(data, ModelKind::gcn, other), Catch::Contains("not a dgnn checkpoint"));
}

TEST_CASE("a damaged checkpoint is refused: flipped byte, truncated, extended, NaN") {
  const auto dir = std::filesystem::temp_directory_path() / "dgnn_test_ckpt_damage";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "good.ckpt").string();
  Tensor w = Tensor::uninitialized(3, 4);
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = 0.25f * float(i);
  save_checkpoint(path, R"({"epoch": 3})", {{"w", &w}});
  const Checkpoint ok = load_checkpoint(path);
  REQUIRE(ok.tensors.size() == 1);
  CHECK(ok.find("w")->data()[5] == 1.25f);

  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto damaged = [&](const std::string& name, const std::string& content) {
    const std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  };
  std::string flipped = bytes;
  flipped[bytes.size() - 10] ^= 0x01;  // inside the tensor's floats
  CHECK_THROWS_WITH(load_checkpoint(damaged("flipped.ckpt", flipped)),
                    Catch::Contains("checksum mismatch"));
  CHECK_THROWS_WITH(load_checkpoint(damaged("short.ckpt", bytes.substr(0, bytes.size() - 2))),
                    Catch::Contains("truncated"));
  CHECK_THROWS_WITH(load_checkpoint(damaged("long.ckpt", bytes + "junk")),
                    Catch::Contains("bytes after its end"));
  // The header is checked by the checksum before it is parsed: a damaged one is "corrupt", not
  // the JSON parser's message.
  std::string header = bytes;
  header[24] = '\x01';
  CHECK_THROWS_WITH(load_checkpoint(damaged("header.ckpt", header)),
                    Catch::Contains("checksum mismatch"));
  // Crafted files, their checksums made right: a header length past the end, shapes that no
  // file of this size could hold (nothing is allocated for them), a non-integer shape.
  auto crafted = [&](const std::string& name, const std::string& json, uint64_t len,
                     const std::string& payload) {
    std::string b(bytes.substr(0, 12));
    b.append(reinterpret_cast<const char*>(&len), 8);
    b += json + payload;
    const uint32_t crc =
        uint32_t(crc32(0, reinterpret_cast<const Bytef*>(b.data()) + 12, uInt(b.size() - 12)));
    b.append(reinterpret_cast<const char*>(&crc), 4);
    return damaged(name, b);
  };
  const std::string huge = R"({"meta":{},"tensors":[{"name":"w","rows":1000000000,"cols":1000}]})";
  CHECK_THROWS_WITH(load_checkpoint(crafted("huge.ckpt", huge, huge.size(), "")),
                    Catch::Contains("impossible shape"));
  CHECK_THROWS_WITH(load_checkpoint(crafted("len.ckpt", huge, uint64_t(1) << 30, "")),
                    Catch::Contains("longer than the file") || Catch::Contains("not the JSON"));
  const std::string real = R"({"meta":{},"tensors":[{"name":"w","rows":1.5,"cols":2}]})";
  CHECK_THROWS_WITH(load_checkpoint(crafted("real.ckpt", real, real.size(), "")),
                    Catch::Contains("not the JSON dgnn writes"));
  CHECK_THROWS_WITH(load_checkpoint(dir.string()), Catch::Contains("is a directory"));
  Tensor bad = w.clone();
  bad.data()[7] = std::nanf("");
  save_checkpoint((dir / "nan.ckpt").string(), "{}", {{"w", &bad}});
  CHECK_THROWS_WITH(load_checkpoint((dir / "nan.ckpt").string()),
                    Catch::Contains("tensor w holds NaN"));
  std::filesystem::remove_all(dir);
}

namespace {
// Layers a user could get wrong: a repeated parameter name, a weight never registered, a
// forward that returns nothing.
struct TwoWeights : Module {
  TwoWeights() {
    add_parameter("weight", 4, 4);
    add_parameter("weight", 4, 4);
  }
  Var forward(ForwardContext&, const Var& x) override { return x; }
};
struct Unregistered : Module {
  Var w{Tensor(8, 3), true};  // a member, never add_parameter'd
  Var forward(ForwardContext&, const Var& x) override { return matmul(x, w); }
};
struct ReturnsNothing : Module {
  ReturnsNothing(int64_t in, int64_t out) { add_parameter("weight", in, out); }
  Var forward(ForwardContext&, const Var&) override { return Var(); }
};
}  // namespace

TEST_CASE("custom layer mistakes are errors, not crashes or silent no-ops") {
  CHECK_THROWS_WITH(TwoWeights(), Catch::Contains("already has a parameter of that name"));
  CHECK_THROWS_WITH(
      StackModel([](int64_t, int64_t, int) { return std::unique_ptr<Module>(); }, {8, 4}, 0.f),
      Catch::Contains("the layer factory returned null for layer 0"));
  CHECK_THROWS_WITH(Var().rows(), Catch::Contains("an undefined Var"));
  Dataset data = small_sbm();
  GraphView g(data.graph.in);
  CHECK_THROWS_WITH(aggregate(g, Var(), Norm::mean), Catch::Contains("aggregate: undefined"));
  std::string why;
  if (!kernels::cuda_available(&why))  // a view for a GPU that cannot run is refused when made
    CHECK_THROWS_AS(GraphView(data.graph.in, Device::cuda), DeviceError);

  TrainOptions opt;
  opt.epochs = 1;
  NodeTask task = make_node_task(data);
  SelfCommunicator comm;
  Unregistered none;
  CHECK_THROWS_WITH(Trainer(none, g, task, comm, opt),
                    Catch::Contains("the model has no parameters to train"));
  StackModel nothing(
      [](int64_t in, int64_t out, int) {
        return std::unique_ptr<Module>(std::make_unique<ReturnsNothing>(in, out));
      },
      {data.feature_dim, data.num_classes}, 0.f);
  Trainer t(nothing, g, task, comm, opt);
  CHECK_THROWS_WITH(t.train_step(0), Catch::Contains("an undefined Var"));
}

TEST_CASE("register_layer: names a layer for the command line, refuses clashes and bad names") {
  LayerSpec spec;
  spec.factory = [](int64_t in, int64_t out, int) -> std::unique_ptr<Module> {
    return std::make_unique<GCNConv>(in, out);
  };
  spec.norms = {Norm::gcn};
  // Names of this run's own (the registry is the process's: Catch may run a case twice).
  static int run = 0;
  const std::string name = "test-gcn_" + std::to_string(run++);
  register_layer(name, spec);
  const LayerSpec* found = find_registered_layer(name);
  REQUIRE(found != nullptr);
  CHECK(found->norms == std::vector<Norm>{Norm::gcn});
  CHECK(found->factory(4, 3, 0)->parameters().size() == 2);
  CHECK(find_registered_layer("test-gcn") == nullptr);
  const std::vector<std::string> names = registered_layer_names();
  CHECK(std::find(names.begin(), names.end(), name) != names.end());

  CHECK_THROWS_WITH(register_layer(name, spec), Catch::Contains("registered already"));
  for (const char* builtin : {"gcn", "sage", "graphsage", "gat", "gcrn", "egcn-o"})
    CHECK_THROWS_WITH(register_layer(builtin, spec), Catch::Contains("is a built-in model"));
  for (const char* bad : {"", "two words", "a,b", "x/y", "-x", "_x"})
    CHECK_THROWS_WITH(register_layer(bad, spec), Catch::Contains("is not a layer name"));
  CHECK_THROWS_WITH(register_layer("no-factory", LayerSpec{}), Catch::Contains("has no factory"));
  // A found entry stays valid while others are registered.
  for (int i = 0; i < 64; ++i) register_layer(name + "-more-" + std::to_string(i), spec);
  CHECK(found == find_registered_layer(name));
}

TEST_CASE("parameter initialisation depends on the seed and the name, not construction order") {
  StackModel a(builtin_layer(ModelKind::gcn), {8, 4, 2}, 0.f);
  StackModel b(builtin_layer(ModelKind::gcn), {8, 4, 2}, 0.f);
  a.reset_parameters(1);
  b.reset_parameters(1);
  auto pa = a.named_parameters(), pb = b.named_parameters();
  REQUIRE(pa.size() == 4);
  CHECK(pa[0].first == "layers.0.weight");
  CHECK(pa[1].first == "layers.0.bias");
  for (size_t i = 0; i < pa.size(); ++i)
    for (int64_t k = 0; k < pa[i].second->var.value().numel(); ++k)
      CHECK(pa[i].second->var.value().data()[k] == pb[i].second->var.value().data()[k]);
  b.reset_parameters(2);
  CHECK(pa[0].second->var.value().data()[0] != pb[0].second->var.value().data()[0]);
  CHECK(a.num_parameters() == 8 * 4 + 4 + 4 * 2 + 2);
}
