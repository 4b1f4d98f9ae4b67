// Parameter spaces for the tuner: ordered integer and categorical parameters, constraints between
// them, and the geometry the searches need (normalized coordinates, neighbours, nearest legal point).
//
// A configuration is one index per parameter into that parameter's value list. Every search works on
// indices, so integer ranges, powers of two and categoricals look alike to it; the normalized
// coordinate of parameter i is index / (size - 1), in [0, 1] (0 for a one-value parameter).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tawa::tune {

using Config = std::vector<int>;

struct Param {
  enum class Kind { Int, Categorical };
  std::string name;
  Kind kind = Kind::Int;
  std::vector<int64_t> ints;      // Kind::Int: strictly increasing
  std::vector<std::string> cats;  // Kind::Categorical: in the order the space lists them

  size_t size() const { return kind == Kind::Int ? ints.size() : cats.size(); }
  std::string text(int index) const;            // as substituted into a command line
  nlohmann::json json(int index) const;         // 64 or "static"
  std::optional<int> indexOf(const nlohmann::json& v) const;
};

// A constraint such as "tile <= grain" or "part != \"simple\" || grain >= 16". Integers, parameter
// names, string literals (compared with ==/!= against categoricals), + - * / %, comparisons, && || !,
// min(a,b), max(a,b), and parentheses. Python's syntax too, as Kernel Tuner's restrictions are written:
// and, or, not, // (rounding down), chained comparisons (a < b <= c), and then % rounds down as
// Python's does (/ stays an integer division). A division by zero or a 64-bit overflow makes the configuration illegal.
class Constraint {
 public:
  // Throws ConstraintError (column is 1-based within text) on a syntax or type error.
  Constraint(std::string text, const std::vector<Param>& params);
  ~Constraint();
  Constraint(Constraint&&) noexcept;
  Constraint& operator=(Constraint&&) noexcept;
  bool holds(const Config& c, const std::vector<Param>& params) const;
  const std::string& text() const { return text_; }

  struct Node;

 private:
  std::string text_;
  std::unique_ptr<Node> root_;
};

struct ConstraintError {
  int column;
  std::string reason;
};

class Space {
 public:
  std::vector<Param> params;
  std::vector<Constraint> constraints;
  std::optional<Config> defaults;  // the "default" entry of SPACE.json, when given

  size_t dims() const { return params.size(); }
  double cardinality() const;  // product of parameter sizes, constraints ignored
  bool legal(const Config& c) const;
  int paramIndex(const std::string& name) const;  // -1 when absent

  std::vector<double> normalize(const Config& c) const;
  // The legal configuration nearest (Euclidean, normalized coordinates) to `point`; exact, by a
  // best-first walk outward from the rounded point. nullopt when none is found within `maxVisits`.
  std::optional<Config> nearestLegal(const std::vector<double>& point, size_t maxVisits = 200000) const;
  std::optional<Config> randomLegal(std::mt19937_64& rng, int tries = 20000) const;
  // Single-parameter moves: one index step up or down for integers, every other value for categoricals.
  std::vector<Config> neighbours(const Config& c) const;
  // Calls f on every legal configuration in index order until f returns false.
  void forEachLegal(const std::function<bool(const Config&)>& f) const;
  // The documented fallback start: the "default" entry when given, else the centre index of every
  // parameter, moved to the nearest legal configuration.
  std::optional<Config> fallback() const;

  nlohmann::json toJson(const Config& c) const;  // {"grain": 64, "part": "static"}
  std::string key(const Config& c) const;        // toJson(c).dump(): keys sorted, canonical
  // Throws std::invalid_argument with a reason when j is not a complete, legal-valued configuration.
  Config fromJson(const nlohmann::json& j) const;
  // Replaces every {name} in a command template with the parameter's value.
  std::string substitute(const std::string& tmpl, const Config& c) const;
  // Names in {braces} of a template that are not parameters (empty when the template is fine).
  std::vector<std::string> unknownPlaceholders(const std::string& tmpl) const;
};

}  // namespace tawa::tune
