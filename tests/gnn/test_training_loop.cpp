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
  double train_epoch(int epoch) override {
    if (epoch == crash_at) throw std::runtime_error("killed");
    optimizer_->zero_grad();
    Var d = add_scalar(model_.w, -3.f);
    Var loss = sum(mul(d, d));
    const double value = loss.value().item();
    loss.backward();
    optimizer_->step();
    ++trained;
    epochs.push_back(epoch);
    return value;
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
