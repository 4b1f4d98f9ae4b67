// The parameter space the search tests share: integers on log and linear scales, a categorical, a
// small integer set, and a constraint.
#pragma once

namespace tawa::test {

inline const char* kTuneSpace = R"({
  "grain": {"pow2": [1, 4096]},
  "tile": {"min": 8, "max": 512, "step": 8},
  "unroll": [1, 2, 4, 8],
  "part": ["auto", "simple", "static", "affinity"],
  "threads": [1, 2, 3, 4],
  "constraints": ["tile <= grain * 64"]
})";

}  // namespace tawa::test
