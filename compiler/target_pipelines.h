// The optimization pipeline of each target, assembled from shared passes according to its
// TargetDescription (see the diagram in pipeline.h).
#pragma once

#include "compiler/pipeline.h"
#include "compiler/target_description.h"

namespace compiler {

Pipeline MakeTargetPipeline(const TargetDescription& target);

}  // namespace compiler
