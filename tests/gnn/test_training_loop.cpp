// The one training loop with a task of the test's own: best-validation selection and restore,
// early stopping, checkpoints every N epochs that survive a crash and resume to the numbers of an
// uninterrupted run, and the checks on what a checkpoint may be loaded into.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/train/training_loop.hpp"

using namespace dgnn;
namespace fs = std::filesystem;

namespace {

// One parameter pulled towards 3 by (w - 3)^2; validation scores follow a script per epoch.
struct Pull : Module {
  Var& w;
  Pull() : w(add_parameter("w", 1, 1, Init::zeros)) {}
  Var forward(ForwardContext&, const Var&) override { return w; }
};

class ScriptedTask : public TrainingTask {
 public:
  ScriptedTask(std::vector<double> scores, const TrainOptions& opt) : scores_(std::move(scores)) {
    params_ = model_.named_parameters();
    optimizer_ = make_optimizer(params_, opt);
  }
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  StepLoss step_loss(int epoch, int64_t) override {
    if (epoch == crash_at) throw std::runtime_error("killed");
    Var d = add_scalar(model_.w, -3.f);
    StepLoss l;
    l.loss = sum(mul(d, d));
    l.value = l.loss.value().item();
    ++trained;
    epochs.push_back(epoch);
    return l;
  }
  Evaluation validate() override {
    Evaluation e;
    const double s = scores_[size_t(epochs.back() - 1)];
    e.metrics = {{"score", s}, {"w", w()}};
    e.selection = s;
    return e;
  }
  Evaluation test() override {
    Evaluation e;
    e.metrics = {{"w", w()}};
    return e;
  }
  double w() const { return model_.w.value().at(0, 0); }

  int crash_at = -1, trained = 0;
  std::vector<int> epochs;

 private:
  std::vector<double> scores_;
  Pull model_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::unique_ptr<Optimizer> optimizer_;
};

fs::path scratch(const char* name) {
  const fs::path d = fs::temp_directory_path() / ("dgnn_loop_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

}  // namespace

TEST_CASE("the loop keeps the best validation epoch and tests with its parameters") {
  SelfCommunicator self;
  TrainOptions opt;
  opt.epochs = 5;
  opt.optimizer = "sgd";
  opt.lr = 0.1f;
  ScriptedTask task({0.2, 0.7, 0.7, 0.5, 0.6}, opt);  // ties keep the earlier epoch
  TrainingLoop loop(task, self, opt);
  std::vector<double> ws;
  const LoopResult r = loop.run([&](const EpochRecord& e) { ws.push_back(e.val.get("w")); });
  REQUIRE(r.epochs_run == 5);
  CHECK(r.best_epoch == 2);
  CHECK(r.best_val.selection == 0.7);
  CHECK_FALSE(r.stopped_early);
  // The test ran with epoch 2's parameter, which the model keeps.
  CHECK(r.test.get("w") == Approx(ws[1]));
  CHECK(task.w() == Approx(ws[1]));
  CHECK(ws[4] > ws[1]);  // training went on past it
}

TEST_CASE("early stopping: --patience ends the run after that many epochs without a better validation") {
  SelfCommunicator self;
  TrainOptions opt;
  opt.epochs = 20;
  opt.patience = 3;
  ScriptedTask task({0.1, 0.5, 0.4, 0.5, 0.3, 0.9, 0.9, 0.9, 0.9, 0.9}, opt);
  TrainingLoop loop(task, self, opt);
  const LoopResult r = loop.run();
  CHECK(r.stopped_early);
  CHECK(r.best_epoch == 2);
  CHECK(r.last_epoch == 5);  // epochs 3, 4, 5 did not beat epoch 2
  CHECK(task.trained == 5);
  opt.patience = -1;
  CHECK_THROWS_AS(TrainingLoop(task, self, opt), OptionError);
}

TEST_CASE("a run killed after a --save-every checkpoint resumes to the uninterrupted numbers") {
  SelfCommunicator self;
  const std::vector<double> scores = {0.1, 0.3, 0.2, 0.6, 0.4, 0.5};
  TrainOptions opt;
  opt.epochs = 6;
  opt.optimizer = "adam";  // state to carry: moments and the step count
  opt.lr = 0.3f;
  opt.meta_json = R"({"model": "pull", "task": "toy"})";
  ScriptedTask whole(scores, opt);
  const LoopResult ref = TrainingLoop(whole, self, opt).run();

  const fs::path ck = scratch("every.ckpt");
  fs::remove(ck);
  TrainOptions save = opt;
  save.save = ck.string();
  save.save_every = 2;
  ScriptedTask crashed(scores, save);
  crashed.crash_at = 5;  // after epoch 4's checkpoint
  CHECK_THROWS_WITH(TrainingLoop(crashed, self, save).run(), "killed");
  REQUIRE(fs::exists(ck));

  TrainOptions resume = opt;
  resume.load = ck.string();
  ScriptedTask rest(scores, resume);
  const LoopResult got = TrainingLoop(rest, self, resume).run();
  CHECK(rest.epochs == std::vector<int>{5, 6});
  CHECK(got.epochs_run == 2);
  CHECK(got.last_epoch == 6);
  CHECK(got.best_epoch == ref.best_epoch);  // epoch 4, restored from the checkpoint
  CHECK(got.best_val.selection == ref.best_val.selection);
  CHECK(got.final_loss == ref.final_loss);  // bit for bit: the same steps from the same state
  CHECK(got.test.get("w") == ref.test.get("w"));
  CHECK(rest.w() == whole.w());

  // What a checkpoint may not be loaded into.
  TrainOptions other = resume;
  other.optimizer = "sgd";
  ScriptedTask t1(scores, other);
  CHECK_THROWS_WITH(TrainingLoop(t1, self, other).run(), Catch::Contains("--optimizer adam"));
  other = resume;
  other.meta_json = R"({"model": "pull", "task": "other"})";
  ScriptedTask t2(scores, other);
  CHECK_THROWS_WITH(TrainingLoop(t2, self, other).run(), Catch::Contains("--task toy"));
  other = resume;
  other.epochs = 3;
  ScriptedTask t3(scores, other);
  CHECK_THROWS_WITH(TrainingLoop(t3, self, other).run(), Catch::Contains("past --epochs 3"));
  TrainOptions bad = opt;
  bad.save_every = 2;  // without --save
  CHECK_THROWS_WITH(TrainingLoop(whole, self, bad), Catch::Contains("--save-every needs --save"));
  fs::remove_all(ck.parent_path());
}

namespace {

// Windows of a task of the test's own: per step, a loss (w - target)^2 scaled by `scale`, with
// its value, weight and count, and whether it steps; records what the loop called.
class WindowTask : public TrainingTask {
 public:
  struct Window {
    float target, scale;
    double weight, count;
    bool step;
  };
  WindowTask(std::vector<Window> windows, const TrainOptions& opt) : windows_(std::move(windows)) {
    params_ = model_.named_parameters();
    optimizer_ = make_optimizer(params_, opt);
  }
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  int64_t steps_in_epoch(int) override { return int64_t(windows_.size()); }
  void begin_epoch(int) override { calls += "b"; }
  StepLoss step_loss(int, int64_t step) override {
    const Window& w = windows_[size_t(step)];
    calls += "s";
    Var d = add_scalar(model_.w, -w.target);
    StepLoss l;
    l.loss = sum(mul(d, d));
    l.value = l.loss.value().item();
    l.scale = w.scale;
    l.weight = w.weight;
    l.count = w.count;
    l.step = w.step;
    return l;
  }
  void end_step(int, int64_t) override { calls += "e"; }
  void end_epoch(int) override { calls += "E"; }
  Evaluation validate() override { return {}; }
  Evaluation test() override { return {}; }
  double w() const { return model_.w.value().at(0, 0); }
  std::string calls;

 private:
  std::vector<Window> windows_;
  Pull model_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace

TEST_CASE("the loop owns the step: zero, backward of the scaled loss, update; the epoch's mean") {
  TrainOptions opt;
  opt.optimizer = "sgd";
  opt.lr = 0.1f;
  opt.epochs = 1;
  SelfCommunicator self;
  // w = 0: the first window's gradient is 2 * (0 - 1) * 0.5 = -1, so w becomes 0.1; the second
  // does not step (its gradient is made, then nothing applies it); the third's is
  // 2 * (0.1 - 2) = -3.8: w = 0.48.
  WindowTask task({{1.f, 0.5f, 2.0, 4.0, true}, {5.f, 1.f, 1.0, 0.0, false}, {2.f, 1.f, 1.0, 1.0, true}},
                  opt);
  TrainingLoop loop(task, self, opt);
  const double loss = loop.train_epoch(1);
  CHECK(task.calls == "bseseseE");
  CHECK(task.w() == Approx(0.48).epsilon(1e-6));
  // (1 * 2 + 4.9^2 * 1 + 1.9^2 * 1) / (4 + 0 + 1)
  CHECK(loss == Approx((2.0 + 4.9 * 4.9 + 1.9 * 1.9) / 5.0).epsilon(1e-6));
  CHECK(task.optimizer().steps() == 2);

  // epoch_gradients: the same windows from a fresh state, nothing applied.
  task.calls.clear();
  const std::vector<StepGradients> g = loop.epoch_gradients(1);
  CHECK(task.calls == "bseseseEb");
  REQUIRE(g.size() == 3);
  CHECK(g[0].grads.at(0) == Approx(2 * (0.48 - 1) * 0.5).epsilon(1e-6));
  CHECK(g[0].count == 4);
  CHECK(g[2].loss == Approx((0.48 - 2) * (0.48 - 2)).epsilon(1e-6));
  CHECK(task.w() == Approx(0.48).epsilon(1e-6));
  CHECK(task.optimizer().steps() == 2);
}

TEST_CASE("clipping (--clip-norm) scales the step's gradients to the norm, and leaves smaller ones alone") {
  TrainOptions opt;
  opt.optimizer = "sgd";
  opt.lr = 0.1f;
  opt.epochs = 1;
  SelfCommunicator self;
  for (const float clip : {0.f, 1.f, 100.f}) {
    INFO("clip " << clip);
    opt.clip_norm = clip;
    // w = 0, target 10: the gradient is -20 (norm 20).
    WindowTask task({{10.f, 1.f, 1.0, 1.0, true}}, opt);
    TrainingLoop loop(task, self, opt);
    loop.train_epoch(1);
    const double expect = clip == 1.f ? 0.1 * 1.0 * 20 / (20 + 1e-6) : 0.1 * 20;
    CHECK(task.w() == Approx(expect).epsilon(1e-6));
  }
  opt.clip_norm = -1;
  SelfCommunicator one;
  WindowTask task({{10.f, 1.f, 1.0, 1.0, true}}, opt);
  CHECK_THROWS_WITH(TrainingLoop(task, one, opt), Catch::Contains("--clip-norm"));
}
