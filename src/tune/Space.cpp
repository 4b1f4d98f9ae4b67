#include "tune/Space.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_set>

#include "ir/Diagnostic.h"

namespace tawa::tune {

std::string Param::text(int index) const {
  return kind == Kind::Int ? std::to_string(ints.at(static_cast<size_t>(index))) : cats.at(static_cast<size_t>(index));
}

nlohmann::json Param::json(int index) const {
  if (kind == Kind::Int) return ints.at(static_cast<size_t>(index));
  return cats.at(static_cast<size_t>(index));
}

std::optional<int> Param::indexOf(const nlohmann::json& v) const {
  if (kind == Kind::Int) {
    if (!v.is_number_integer()) return std::nullopt;
    auto x = v.get<int64_t>();
    auto it = std::lower_bound(ints.begin(), ints.end(), x);
    if (it == ints.end() || *it != x) return std::nullopt;
    return static_cast<int>(it - ints.begin());
  }
  if (!v.is_string()) return std::nullopt;
  auto it = std::find(cats.begin(), cats.end(), v.get<std::string>());
  if (it == cats.end()) return std::nullopt;
  return static_cast<int>(it - cats.begin());
}

// ---- constraints ----------------------------------------------------------------------------------

// Every value is an int64 at evaluation time: categoricals compare by index, and a string literal is
// resolved to the index of that value in the categorical it is compared with.
struct Constraint::Node {
  // Div and Mod truncate toward zero (C's / and %); FloorDiv and FloorMod round down (Python's // and %,
  // which a constraint written with Python's `and`/`or`/`not` or `//` means).
  enum class Op { Const, Param, Neg, Not, Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Min, Max };
  enum class Type { Int, Bool, Cat, Str };
  Op op = Op::Const;
  Type type = Type::Int;
  int64_t value = 0;   // Const
  int param = -1;      // Param, or the categorical a Cat value belongs to
  std::string str;     // an unresolved string literal (Type::Str)
  int column = 0;
  std::unique_ptr<Node> a, b;
};

namespace {

using Node = Constraint::Node;
using NodeP = std::unique_ptr<Node>;

class ExprParser {
 public:
  ExprParser(const std::string& s, const std::vector<Param>& ps) : src(s), params(ps) {}

  // The parser and the evaluator recurse: a bounded length and nesting keep a hostile constraint from
  // overflowing the stack (a deep tree is also a deep recursion when it is freed).
  static constexpr size_t kMaxLength = 4096;
  static constexpr int kMaxNesting = 100;

  NodeP parse() {
    if (src.size() > kMaxLength) fail(1, "longer than " + std::to_string(kMaxLength) + " characters");
    auto n = parseOr();
    skipWs();
    if (python) pythonModulo(*n);
    if (pos < src.size()) fail("unexpected '" + std::string(1, src[pos]) + "'");
    if (n->type != Node::Type::Bool) fail(0, "a constraint must be a comparison or a logical expression");
    return n;
  }

 private:
  const std::string& src;
  const std::vector<Param>& params;
  size_t pos = 0;
  int nesting = 0;
  bool python = false;  // a Python keyword or // was seen: % is Python's (floor) modulo too

  // One level deeper for a parenthesis, a min/max call or a unary operator.
  NestingLevel deeper(int col) {
    return NestingLevel(nesting, kMaxNesting, [&] { fail(col, "nested more than " + std::to_string(kMaxNesting) + " levels deep"); });
  }

  [[noreturn]] void fail(const std::string& why) { fail(static_cast<int>(pos) + 1, why); }
  [[noreturn]] void fail(int col, const std::string& why) { throw ConstraintError{col, why}; }

  void skipWs() {
    while (pos < src.size() && std::isspace(static_cast<unsigned char>(src[pos]))) ++pos;
  }
  bool eat(const char* tok) {
    skipWs();
    size_t n = std::char_traits<char>::length(tok);
    if (src.compare(pos, n, tok) != 0) return false;
    // "<" must not swallow the first half of "<=", nor "=" of "==", etc.
    if (n == 1 && pos + 1 < src.size() && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!') && src[pos + 1] == '=') return false;
    pos += n;
    return true;
  }

  // A keyword of Python's syntax (and, or, not), not the start of a longer name (order, nothing).
  bool eatWord(const char* word) {
    skipWs();
    size_t n = std::char_traits<char>::length(word);
    if (src.compare(pos, n, word) != 0) return false;
    if (pos + n < src.size() && (std::isalnum(static_cast<unsigned char>(src[pos + n])) || src[pos + n] == '_')) return false;
    pos += n;
    python = true;
    return true;
  }

  // In a constraint written in Python's syntax, % is Python's modulo (it rounds down).
  static void pythonModulo(Node& n) {
    if (n.op == Node::Op::Mod) n.op = Node::Op::FloorMod;
    if (n.a) pythonModulo(*n.a);
    if (n.b) pythonModulo(*n.b);
  }

  static NodeP clone(const Node& n) {
    auto c = std::make_unique<Node>();
    c->op = n.op;
    c->type = n.type;
    c->value = n.value;
    c->param = n.param;
    c->str = n.str;
    c->column = n.column;
    if (n.a) c->a = clone(*n.a);
    if (n.b) c->b = clone(*n.b);
    return c;
  }

  static NodeP make(Node::Op op, Node::Type t, int col, NodeP a = nullptr, NodeP b = nullptr) {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->type = t;
    n->column = col;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  void needInt(const Node& n, const char* what) {
    if (n.type != Node::Type::Int) fail(n.column, std::string(what) + " needs integer operands");
  }
  void needBool(const Node& n, const char* what) {
    if (n.type != Node::Type::Bool) fail(n.column, std::string(what) + " needs comparisons as operands");
  }

  NodeP parseOr() {
    auto l = parseAnd();
    for (;;) {
      skipWs();
      int col = static_cast<int>(pos) + 1;
      if (!eat("||") && !eatWord("or")) return l;
      auto r = parseAnd();
      needBool(*l, "'||'");
      needBool(*r, "'||'");
      l = make(Node::Op::Or, Node::Type::Bool, col, std::move(l), std::move(r));
    }
  }
  NodeP parseAnd() {
    auto l = parseNot();
    for (;;) {
      skipWs();
      int col = static_cast<int>(pos) + 1;
      if (!eat("&&") && !eatWord("and")) return l;
      auto r = parseNot();
      needBool(*l, "'&&'");
      needBool(*r, "'&&'");
      l = make(Node::Op::And, Node::Type::Bool, col, std::move(l), std::move(r));
    }
  }
  NodeP parseNot() {
    skipWs();
    int col = static_cast<int>(pos) + 1;
    if (eat("!") || eatWord("not")) {
      auto level = deeper(col);
      auto x = parseNot();
      needBool(*x, "'!'");
      return make(Node::Op::Not, Node::Type::Bool, col, std::move(x));
    }
    return parseCmp();
  }
  // A comparison, or Python's chain of them: `a < b <= c` is `a < b && b <= c`.
  NodeP parseCmp() {
    auto l = parseAdd();
    NodeP chain;
    for (;;) {
      skipWs();
      int col = static_cast<int>(pos) + 1;
      auto op = compareOp();
      if (!op) break;
      auto r = parseAdd();
      NodeP right = clone(*r);  // the next comparison's left operand
      auto cmp = comparison(op->second, op->first, std::move(l), std::move(r), col);
      chain = chain ? make(Node::Op::And, Node::Type::Bool, col, std::move(chain), std::move(cmp)) : std::move(cmp);
      l = std::move(right);
    }
    return chain ? std::move(chain) : std::move(l);
  }
  std::optional<std::pair<const char*, Node::Op>> compareOp() {
    static const std::pair<const char*, Node::Op> ops[] = {{"<=", Node::Op::Le}, {">=", Node::Op::Ge}, {"==", Node::Op::Eq},
                                                           {"!=", Node::Op::Ne}, {"<", Node::Op::Lt},  {">", Node::Op::Gt}};
    for (auto& o : ops)
      if (eat(o.first)) return o;
    return std::nullopt;
  }
  NodeP comparison(Node::Op op, const char* tok, NodeP l, NodeP r, int col) {
    bool eq = op == Node::Op::Eq || op == Node::Op::Ne;
    bool lc = l->type == Node::Type::Cat || l->type == Node::Type::Str;
    bool rc = r->type == Node::Type::Cat || r->type == Node::Type::Str;
    if (lc || rc) {
      if (!eq) fail(col, std::string("'") + tok + "' compares integers; categorical values only support == and !=");
      resolvePair(*l, *r, col);
    } else {
      needInt(*l, tok);
      needInt(*r, tok);
    }
    return make(op, Node::Type::Bool, col, std::move(l), std::move(r));
  }
  // Makes both sides of a categorical comparison indices into the same parameter's value list.
  void resolvePair(Node& l, Node& r, int col) {
    if (l.type == Node::Type::Str && r.type == Node::Type::Str) fail(col, "comparing two string literals");
    Node& cat = l.type == Node::Type::Cat ? l : r;
    Node& other = l.type == Node::Type::Cat ? r : l;
    if (cat.type != Node::Type::Cat) fail(col, "a string can only be compared with a categorical parameter");
    const Param& p = params[static_cast<size_t>(cat.param)];
    if (other.type == Node::Type::Int) fail(other.column, "'" + p.name + "' is categorical; compare it with a quoted value");
    if (other.type == Node::Type::Cat) {
      if (other.param != cat.param) fail(col, "comparing two different categorical parameters");
      return;
    }
    auto idx = p.indexOf(other.str);
    if (!idx) {
      std::string vals;
      for (auto& v : p.cats) vals += (vals.empty() ? "" : ", ") + v;
      fail(other.column, "\"" + other.str + "\" is not a value of '" + p.name + "' (" + vals + ")");
    }
    other.op = Node::Op::Const;
    other.value = *idx;
    other.type = Node::Type::Cat;
    other.param = cat.param;
  }
  NodeP parseAdd() {
    auto l = parseMul();
    for (;;) {
      skipWs();
      int col = static_cast<int>(pos) + 1;
      Node::Op op;
      if (eat("+")) op = Node::Op::Add;
      else if (eat("-")) op = Node::Op::Sub;
      else return l;
      auto r = parseMul();
      needInt(*l, op == Node::Op::Add ? "'+'" : "'-'");
      needInt(*r, op == Node::Op::Add ? "'+'" : "'-'");
      l = make(op, Node::Type::Int, col, std::move(l), std::move(r));
    }
  }
  NodeP parseMul() {
    auto l = parseUnary();
    for (;;) {
      skipWs();
      int col = static_cast<int>(pos) + 1;
      Node::Op op;
      if (eat("*")) op = Node::Op::Mul;
      else if (eat("//")) op = Node::Op::FloorDiv, python = true;
      else if (eat("/")) op = Node::Op::Div;
      else if (eat("%")) op = Node::Op::Mod;
      else return l;
      auto r = parseUnary();
      needInt(*l, "arithmetic");
      needInt(*r, "arithmetic");
      l = make(op, Node::Type::Int, col, std::move(l), std::move(r));
    }
  }
  NodeP parseUnary() {
    skipWs();
    int col = static_cast<int>(pos) + 1;
    if (eat("-")) {
      auto level = deeper(col);
      auto x = parseUnary();
      needInt(*x, "'-'");
      return make(Node::Op::Neg, Node::Type::Int, col, std::move(x));
    }
    return parsePrimary();
  }
  NodeP parsePrimary() {
    skipWs();
    int col = static_cast<int>(pos) + 1;
    if (pos >= src.size()) fail("expected a value, found the end of the constraint");
    char c = src[pos];
    if (c == '(') {
      auto level = deeper(col);
      ++pos;
      auto n = parseOr();
      if (!eat(")")) fail("expected ')'");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos]))) {
        if (v > (INT64_MAX - 9) / 10) fail(col, "integer literal too large");
        v = v * 10 + (src[pos++] - '0');
      }
      auto n = make(Node::Op::Const, Node::Type::Int, col);
      n->value = v;
      return n;
    }
    if (c == '"' || c == '\'') {
      size_t end = src.find(c, pos + 1);
      if (end == std::string::npos) fail("unterminated string literal");
      auto n = make(Node::Op::Const, Node::Type::Str, col);
      n->str = src.substr(pos + 1, end - pos - 1);
      pos = end + 1;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos;
      while (pos < src.size() && (std::isalnum(static_cast<unsigned char>(src[pos])) || src[pos] == '_')) ++pos;
      std::string name = src.substr(start, pos - start);
      if (name == "and" || name == "or" || name == "not")
        fail(col, "use &&, || and ! instead of '" + name + "'");
      skipWs();
      if ((name == "min" || name == "max") && pos < src.size() && src[pos] == '(') {
        auto level = deeper(col);
        ++pos;
        auto a = parseAdd();
        if (!eat(",")) fail("expected ',' between the arguments of " + name);
        auto b = parseAdd();
        if (!eat(")")) fail("expected ')' after the arguments of " + name);
        needInt(*a, name.c_str());
        needInt(*b, name.c_str());
        return make(name == "min" ? Node::Op::Min : Node::Op::Max, Node::Type::Int, col, std::move(a), std::move(b));
      }
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].name != name) continue;
        auto n = make(Node::Op::Param, params[i].kind == Param::Kind::Int ? Node::Type::Int : Node::Type::Cat, col);
        n->param = static_cast<int>(i);
        return n;
      }
      std::string known;
      for (auto& p : params) known += (known.empty() ? "" : ", ") + p.name;
      fail(col, "unknown parameter '" + name + "' (parameters: " + known + ")");
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
};

// Evaluates n; returns false in `ok` on a division by zero or a 64-bit overflow (then the constraint
// does not hold: the configuration is illegal, as with a division by zero).
int64_t evalNode(const Node& n, const Config& c, const std::vector<Param>& ps, bool& ok) {
  using Op = Node::Op;
  switch (n.op) {
    case Op::Const: return n.value;
    case Op::Param: {
      const Param& p = ps[static_cast<size_t>(n.param)];
      int idx = c[static_cast<size_t>(n.param)];
      return p.kind == Param::Kind::Int ? p.ints[static_cast<size_t>(idx)] : idx;
    }
    case Op::Neg: {
      int64_t a = evalNode(*n.a, c, ps, ok), r = 0;
      if (__builtin_sub_overflow(int64_t{0}, a, &r)) ok = false;
      return r;
    }
    case Op::Not: return !evalNode(*n.a, c, ps, ok);
    case Op::And: return evalNode(*n.a, c, ps, ok) && evalNode(*n.b, c, ps, ok);
    case Op::Or: return evalNode(*n.a, c, ps, ok) || evalNode(*n.b, c, ps, ok);
    default: break;
  }
  int64_t a = evalNode(*n.a, c, ps, ok), b = evalNode(*n.b, c, ps, ok), r = 0;
  switch (n.op) {
    case Op::Add:
      if (__builtin_add_overflow(a, b, &r)) ok = false;
      return r;
    case Op::Sub:
      if (__builtin_sub_overflow(a, b, &r)) ok = false;
      return r;
    case Op::Mul:
      if (__builtin_mul_overflow(a, b, &r)) ok = false;
      return r;
    case Op::Div:
    case Op::Mod:
    case Op::FloorDiv:
    case Op::FloorMod: {
      if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) {  // x86 traps on INT64_MIN / -1
        ok = false;
        return 0;
      }
      const int64_t q = a / b, m = a % b;
      const bool down = m != 0 && ((m < 0) != (b < 0));  // Python rounds the quotient down
      if (n.op == Op::Div) return q;
      if (n.op == Op::Mod) return m;
      return n.op == Op::FloorDiv ? q - down : m + (down ? b : 0);
    }
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    case Op::Min: return std::min(a, b);
    case Op::Max: return std::max(a, b);
    default: return 0;
  }
}

}  // namespace

Constraint::Constraint(std::string text, const std::vector<Param>& params) : text_(std::move(text)) {
  root_ = ExprParser(text_, params).parse();
}
Constraint::~Constraint() = default;
Constraint::Constraint(Constraint&&) noexcept = default;
Constraint& Constraint::operator=(Constraint&&) noexcept = default;

bool Constraint::holds(const Config& c, const std::vector<Param>& params) const {
  bool ok = true;
  int64_t v = evalNode(*root_, c, params, ok);
  return ok && v != 0;
}

// ---- the space ------------------------------------------------------------------------------------

double Space::cardinality() const {
  double n = 1;
  for (auto& p : params) n *= static_cast<double>(p.size());
  return n;
}

bool Space::legal(const Config& c) const {
  if (c.size() != params.size()) return false;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] < 0 || static_cast<size_t>(c[i]) >= params[i].size()) return false;
  for (auto& k : constraints)
    if (!k.holds(c, params)) return false;
  return true;
}

int Space::paramIndex(const std::string& name) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<double> Space::normalize(const Config& c) const {
  std::vector<double> x(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    size_t n = params[i].size();
    x[i] = n > 1 ? static_cast<double>(c[i]) / static_cast<double>(n - 1) : 0.0;
  }
  return x;
}

namespace {
struct ConfigHash {
  size_t operator()(const Config& c) const {
    size_t h = 1469598103934665603ull;
    for (int v : c) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};
}  // namespace

std::optional<Config> Space::nearestLegal(const std::vector<double>& point, size_t maxVisits) const {
  size_t d = params.size();
  auto coord = [&](size_t i, int idx) {
    size_t n = params[i].size();
    return n > 1 ? static_cast<double>(idx) / static_cast<double>(n - 1) : 0.0;
  };
  auto dist = [&](const Config& c) {
    double s = 0;
    for (size_t i = 0; i < d; ++i) {
      double t = std::clamp(i < point.size() ? point[i] : 0.0, 0.0, 1.0);
      double e = coord(i, c[i]) - t;
      s += e * e;
    }
    return s;
  };
  Config start(d);
  for (size_t i = 0; i < d; ++i) {
    double t = std::clamp(i < point.size() ? point[i] : 0.0, 0.0, 1.0);
    size_t n = params[i].size();
    start[i] = n > 1 ? static_cast<int>(std::lround(t * static_cast<double>(n - 1))) : 0;
  }
  // The distance is separable and convex in each index, so every configuration is reachable from the
  // rounded point by single steps that never bring it closer: best-first pops in distance order.
  using Item = std::pair<double, Config>;
  auto cmp = [](const Item& a, const Item& b) { return a.first > b.first; };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> open(cmp);
  std::unordered_set<Config, ConfigHash> seen;
  open.push({dist(start), start});
  seen.insert(start);
  while (!open.empty() && seen.size() <= maxVisits) {
    Config c = open.top().second;
    open.pop();
    if (legal(c)) return c;
    for (size_t i = 0; i < d; ++i) {
      for (int step : {-1, 1}) {
        int v = c[i] + step;
        if (v < 0 || static_cast<size_t>(v) >= params[i].size()) continue;
        Config n = c;
        n[i] = v;
        if (seen.insert(n).second) open.push({dist(n), std::move(n)});
      }
    }
  }
  return std::nullopt;
}

std::optional<Config> Space::randomLegal(std::mt19937_64& rng, int tries) const {
  Config c(params.size());
  for (int t = 0; t < tries; ++t) {
    for (size_t i = 0; i < params.size(); ++i)
      c[i] = static_cast<int>(std::uniform_int_distribution<size_t>(0, params[i].size() - 1)(rng));
    if (legal(c)) return c;
  }
  // A tightly constrained space: take the legal point nearest to a random one.
  std::vector<double> x(params.size());
  for (auto& v : x) v = std::uniform_real_distribution<double>(0, 1)(rng);
  return nearestLegal(x);
}

std::vector<Config> Space::neighbours(const Config& c) const {
  std::vector<Config> out;
  for (size_t i = 0; i < params.size(); ++i) {
    int n = static_cast<int>(params[i].size());
    if (params[i].kind == Param::Kind::Categorical) {
      for (int v = 0; v < n; ++v) {
        if (v == c[i]) continue;
        Config m = c;
        m[i] = v;
        out.push_back(std::move(m));
      }
    } else {
      for (int step : {-1, 1}) {
        int v = c[i] + step;
        if (v < 0 || v >= n) continue;
        Config m = c;
        m[i] = v;
        out.push_back(std::move(m));
      }
    }
  }
  return out;
}

void Space::forEachLegal(const std::function<bool(const Config&)>& f) const {
  if (params.empty()) return;
  for (auto& p : params)
    if (p.size() == 0) return;
  Config c(params.size(), 0);
  for (;;) {
    if (legal(c) && !f(c)) return;
    size_t i = params.size();
    while (i > 0) {
      --i;
      if (static_cast<size_t>(++c[i]) < params[i].size()) break;
      c[i] = 0;
      if (i == 0) return;
    }
  }
}

std::optional<Config> Space::fallback() const {
  if (defaults && legal(*defaults)) return defaults;
  std::vector<double> mid(params.size(), 0.5);
  if (defaults) return nearestLegal(normalize(*defaults));
  return nearestLegal(mid);
}

nlohmann::json Space::toJson(const Config& c) const {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < params.size(); ++i) j[params[i].name] = params[i].json(c[i]);
  return j;
}

std::string Space::key(const Config& c) const { return toJson(c).dump(); }

Config Space::fromJson(const nlohmann::json& j) const {
  if (!j.is_object()) throw std::invalid_argument("a configuration is a JSON object of parameter values");
  Config c(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = j.find(params[i].name);
    if (it == j.end()) throw std::invalid_argument("no value for parameter '" + params[i].name + "'");
    auto idx = params[i].indexOf(*it);
    if (!idx) throw std::invalid_argument(it->dump() + " is not a value of parameter '" + params[i].name + "'");
    c[i] = *idx;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (paramIndex(it.key()) < 0) throw std::invalid_argument("'" + it.key() + "' is not a parameter of the space");
  return c;
}

std::string Space::substitute(const std::string& tmpl, const Config& c) const {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '{' && (i == 0 || tmpl[i - 1] != '$')) {  // ${VAR} belongs to the shell
      size_t end = tmpl.find('}', i);
      if (end != std::string::npos) {
        int p = paramIndex(tmpl.substr(i + 1, end - i - 1));
        if (p >= 0) {
          out += params[static_cast<size_t>(p)].text(c[static_cast<size_t>(p)]);
          i = end + 1;
          continue;
        }
      }
    }
    out += tmpl[i++];
  }
  return out;
}

std::vector<std::string> Space::unknownPlaceholders(const std::string& tmpl) const {
  std::vector<std::string> bad;
  size_t i = 0;
  while ((i = tmpl.find('{', i)) != std::string::npos) {
    size_t end = tmpl.find('}', i);
    if (end == std::string::npos) break;
    std::string name = tmpl.substr(i + 1, end - i - 1);
    bool ident = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    });
    bool shell = i > 0 && tmpl[i - 1] == '$';
    if (ident && !shell && paramIndex(name) < 0) bad.push_back(name);
    i = end + 1;
  }
  return bad;
}

}  // namespace tawa::tune
