// SPACE.json: a parameter space as a JSON object.
//
//   {
//     "grain": {"pow2": [1, 4096]},                  integers: powers of two in [lo, hi]
//     "tile":  {"min": 8, "max": 256, "step": 8},    integers: min, min+step, ..., <= max
//     "threads": [1, 2],                             an explicit list of integers
//     "part":  ["auto", "simple", "static"],         categorical values
//     "constraints": ["tile <= grain"],              optional: each must hold
//     "default": {"grain": 1, "tile": 64, ...},      optional: the program's own default
//     "description": "..."                           optional, ignored
//   }
//
// Errors are tawa::UserError located at the file's line and column of the offending value (for a
// constraint, the column inside the string), and name the JSON path and the reason.
#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "ir/Diagnostic.h"
#include "tune/Space.h"

namespace tawa::tune {

// The (line, column) of 0-based byte offset `off` of `text`.
std::pair<int, int> offsetLineCol(const std::string& text, size_t off);
// `text` parsed as JSON; a syntax error, or nesting deeper than 64 levels, is a UserError at
// fileName:line:col ("invalid JSON: syntax error ...").
nlohmann::json parseJsonText(const std::string& text, const std::string& fileName);

Space parseSpace(const std::string& text, const std::string& fileName);
Space loadSpace(const std::string& path);
// The line and column of the value at JSON pointer `path` ("/results/2/config") in `text`, a valid
// JSON document; (0, 0) when it cannot be found.
std::pair<int, int> jsonLineCol(const std::string& text, const std::string& path);  // throws UserError when the file cannot be read
// The same as a diagnostic's location in file `fileName` (its line 0, column 0 when not found).
Location jsonLocation(const std::string& fileName, const std::string& text, const std::string& path);

}  // namespace tawa::tune
