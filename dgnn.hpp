#pragma once
// dgnn's public API in one include: tensors and autograd ops, graph views and layers, training,
// graph input and generators.
#include "comm/communicator.hpp"
#include "common/error.hpp"
#include "datasets/sbm.hpp"
#include "gnn/autograd.hpp"
#include "gnn/checkpoint.hpp"
#include "gnn/graph_view.hpp"
#include "gnn/layers.hpp"
#include "gnn/loss.hpp"
#include "gnn/module.hpp"
#include "gnn/ops.hpp"
#include "gnn/optimizer.hpp"
#include "gnn/tensor.hpp"
#include "gnn/trainer.hpp"
#include "graph/dataset.hpp"
#include "graph/graph.hpp"
