#pragma once
// Binary cache of parsed graphs: the CSR and id map written once, read back ~10x+ faster than
// parsing. Keyed by the source's absolute path and parse options; invalidated when the source's
// size or modification time changes. Location: $DGNN_CACHE_DIR, else $XDG_CACHE_HOME/dgnn,
// else ~/.cache/dgnn (the source's folder may be read-only).
#include <optional>
#include <string>

#include "dgnn/graph/graph.hpp"

namespace dgnn {

// The cache file a source would use, for messages and tests.
std::string cache_path_for(const std::string& source, const EdgeListOptions& opt,
                           int64_t min_vertices);
// A cached graph if a valid one exists (a corrupt or stale file is ignored and replaced).
std::optional<Graph> cache_load(const std::string& source, const EdgeListOptions& opt,
                                int64_t min_vertices);
// Writes atomically (temp file + rename); failures to write are silent (the cache is optional).
void cache_store(const std::string& source, const EdgeListOptions& opt, int64_t min_vertices,
                 const Graph& g);

}  // namespace dgnn
