#include "tune/SpaceJson.h"

#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ir/Diagnostic.h"

namespace tawa::tune {

using nlohmann::json;

std::pair<int, int> offsetLineCol(const std::string& text, size_t off) {
  int line = 1, col = 1;
  for (size_t i = 0; i < off && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

json parseJsonText(const std::string& text, const std::string& fileName) {
  // Nesting first: the locator that finds where a value starts (for error positions) recurses, and
  // none of tawa's JSON inputs nests deeper than a few levels.
  constexpr int kMaxDepth = 64;
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        auto [line, col] = offsetLineCol(text, i);
        throw UserError(Location::at(std::make_shared<const std::string>(fileName), line, col),
                        "JSON nested more than " + std::to_string(kMaxDepth) + " levels deep");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // byte is the 1-based offset just past the offending character.
    auto [line, col] = offsetLineCol(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    auto p = what.find("syntax error");
    throw UserError(Location::at(std::make_shared<const std::string>(fileName), line, col),
                    "invalid JSON: " + (p == std::string::npos ? what : what.substr(p)));
  }
}

namespace {

// Where each value of a (valid) JSON text starts, by JSON pointer ("/tile/max", "/constraints/0").
// nlohmann::json keeps no positions, so this walks the text once more.
class Locator {
 public:
  explicit Locator(const std::string& t) : text(t) {
    skipWs();
    value("");
  }
  std::pair<int, int> at(const std::string& path) const {
    auto it = where.find(path);
    return offsetLineCol(text, it == where.end() ? 0 : it->second);
  }
  // The first key given twice in one object ("/x"), or "": nlohmann::json keeps the last silently.
  std::string duplicate;

 private:
  const std::string& text;
  size_t pos = 0;
  std::map<std::string, size_t> where;

  void skipWs() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r')) ++pos;
  }
  std::string string() {
    std::string s;
    ++pos;  // opening quote
    while (pos < text.size() && text[pos] != '"') {
      if (text[pos] == '\\') ++pos;
      if (pos < text.size()) s += text[pos++];
    }
    ++pos;
    return s;
  }
  void value(const std::string& path) {
    where[path] = pos;
    if (pos >= text.size()) return;
    char c = text[pos];
    if (c == '{') {
      ++pos;
      skipWs();
      std::set<std::string> keys;
      while (pos < text.size() && text[pos] != '}') {
        std::string k = string();
        if (!keys.insert(k).second && duplicate.empty()) duplicate = path + "/" + k;
        skipWs();
        ++pos;  // ':'
        skipWs();
        value(path + "/" + k);
        skipWs();
        if (pos < text.size() && text[pos] == ',') ++pos;
        skipWs();
      }
      ++pos;
    } else if (c == '[') {
      ++pos;
      skipWs();
      int i = 0;
      while (pos < text.size() && text[pos] != ']') {
        value(path + "/" + std::to_string(i++));
        skipWs();
        if (pos < text.size() && text[pos] == ',') ++pos;
        skipWs();
      }
      ++pos;
    } else if (c == '"') {
      string();
    } else {
      while (pos < text.size() && text[pos] != ',' && text[pos] != '}' && text[pos] != ']' && text[pos] != ' ' &&
             text[pos] != '\n' && text[pos] != '\r' && text[pos] != '\t')
        ++pos;
    }
  }
};

struct Ctx {
  std::shared_ptr<const std::string> file;
  const Locator* loc;

  [[noreturn]] void fail(const std::string& path, const std::string& why, int extraCol = 0, std::string hint = {}) const {
    auto [line, col] = loc->at(path);
    throw UserError(Location::at(file, line, col + extraCol), (path.empty() ? std::string("the space") : path) + ": " + why,
                    std::move(hint));
  }
};

constexpr size_t kMaxValues = 1000000;

// A JSON integer as int64_t, or a located error: nlohmann::json reads integers above INT64_MAX as
// unsigned, and get<int64_t>() would wrap them to negative values.
int64_t integer(const Ctx& cx, const json& x, const std::string& at) {
  if (x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    cx.fail(at, x.dump() + " is too large (integers are 64-bit signed)");
  return x.get<int64_t>();
}

Param parseParam(const Ctx& cx, const std::string& name, const json& v) {
  std::string path = "/" + name;
  Param p;
  p.name = name;
  if (v.is_array()) {
    if (v.empty()) cx.fail(path, "a parameter needs at least one value");
    bool allInt = true, allStr = true;
    for (auto& e : v) {
      allInt = allInt && e.is_number_integer();
      allStr = allStr && e.is_string();
    }
    if (allInt) {
      p.kind = Param::Kind::Int;
      std::set<int64_t> seen;
      for (size_t i = 0; i < v.size(); ++i)
        if (!seen.insert(integer(cx, v[i], path + "/" + std::to_string(i))).second) cx.fail(path + "/" + std::to_string(i), "value " + v[i].dump() + " is listed twice");
      p.ints.assign(seen.begin(), seen.end());
    } else if (allStr) {
      p.kind = Param::Kind::Categorical;
      std::set<std::string> seen;
      for (size_t i = 0; i < v.size(); ++i) {
        auto s = v[i].get<std::string>();
        if (!seen.insert(s).second) cx.fail(path + "/" + std::to_string(i), "value \"" + s + "\" is listed twice");
        p.cats.push_back(s);
      }
    } else {
      for (size_t i = 0; i < v.size(); ++i)
        if (!v[i].is_number_integer() && !v[i].is_string())
          cx.fail(path + "/" + std::to_string(i), "values must be integers or strings, not " + std::string(v[i].type_name()));
      cx.fail(path, "a list of values must be all integers or all strings");
    }
    return p;
  }
  if (!v.is_object())
    cx.fail(path, "expected a list of values, {\"min\", \"max\", \"step\"} or {\"pow2\": [lo, hi]}, not " + std::string(v.type_name()));
  p.kind = Param::Kind::Int;
  auto getInt = [&](const char* key) -> int64_t {
    const json& x = v.at(key);
    if (!x.is_number_integer()) cx.fail(path + "/" + key, std::string("\"") + key + "\" must be an integer");
    return integer(cx, x, path + "/" + key);
  };
  if (v.contains("pow2")) {
    for (auto it = v.begin(); it != v.end(); ++it)
      if (it.key() != "pow2") cx.fail(path + "/" + it.key(), "unexpected key \"" + it.key() + "\" next to \"pow2\"");
    const json& r = v["pow2"];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer())
      cx.fail(path + "/pow2", "\"pow2\" must be [lo, hi] with two integers");
    int64_t lo = integer(cx, r[0], path + "/pow2/0"), hi = integer(cx, r[1], path + "/pow2/1");
    auto isPow2 = [](int64_t x) { return x > 0 && (x & (x - 1)) == 0; };
    if (!isPow2(lo)) cx.fail(path + "/pow2/0", std::to_string(lo) + " is not a power of two");
    if (!isPow2(hi)) cx.fail(path + "/pow2/1", std::to_string(hi) + " is not a power of two");
    if (lo > hi) cx.fail(path + "/pow2", "lo (" + std::to_string(lo) + ") is greater than hi (" + std::to_string(hi) + ")");
    for (int64_t x = lo;; x *= 2) {  // stops at hi before x *= 2 could overflow (hi is at most 2^62)
      p.ints.push_back(x);
      if (x >= hi) break;
    }
    return p;
  }
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it.key() != "min" && it.key() != "max" && it.key() != "step")
      cx.fail(path + "/" + it.key(), "unexpected key \"" + it.key() + "\" (a range has \"min\", \"max\" and optional \"step\")");
  if (!v.contains("min") || !v.contains("max")) cx.fail(path, "a range needs both \"min\" and \"max\"");
  int64_t lo = getInt("min"), hi = getInt("max"), step = v.contains("step") ? getInt("step") : 1;
  if (step <= 0) cx.fail(path + "/step", "\"step\" must be positive");
  if (lo > hi) cx.fail(path + "/min", "\"min\" (" + std::to_string(lo) + ") is greater than \"max\" (" + std::to_string(hi) + ")");
  // In unsigned arithmetic: hi - lo overflows int64_t for a range across most of it.
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo), n = span / static_cast<uint64_t>(step) + 1;
  if (span / static_cast<uint64_t>(step) >= kMaxValues)
    cx.fail(path, "the range has more than 1000000 values", 0, "use a larger \"step\" or \"pow2\"");
  for (uint64_t i = 0; i < n; ++i) p.ints.push_back(static_cast<int64_t>(static_cast<uint64_t>(lo) + i * static_cast<uint64_t>(step)));
  return p;
}

}  // namespace

std::pair<int, int> jsonLineCol(const std::string& text, const std::string& path) {
  try {
    return Locator(text).at(path);
  } catch (...) {
    return {0, 0};
  }
}

Location jsonLocation(const std::string& fileName, const std::string& text, const std::string& path) {
  auto [line, col] = jsonLineCol(text, path);
  return Location::at(std::make_shared<const std::string>(fileName), line, col);
}

Space parseSpace(const std::string& text, const std::string& fileName) {
  auto file = std::make_shared<const std::string>(fileName);
  json doc = parseJsonText(text, fileName);
  Locator loc(text);
  Ctx cx{file, &loc};
  if (!doc.is_object()) cx.fail("", "a space is a JSON object mapping parameter names to their values");
  if (!loc.duplicate.empty()) cx.fail(loc.duplicate, "given twice in one object (JSON would keep only the last)");
  Space s;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "constraints" || k == "default" || k == "description") continue;
    bool ident = !k.empty() && (std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_');
    for (char c : k) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ident) cx.fail("/" + k, "parameter name '" + k + "' must be an identifier (letters, digits, _)");
    s.params.push_back(parseParam(cx, k, it.value()));
  }
  if (s.params.empty()) cx.fail("", "the space has no parameters");
  if (doc.contains("constraints")) {
    const json& cs = doc["constraints"];
    if (!cs.is_array()) cx.fail("/constraints", "\"constraints\" must be a list of strings");
    for (size_t i = 0; i < cs.size(); ++i) {
      std::string path = "/constraints/" + std::to_string(i);
      if (!cs[i].is_string()) cx.fail(path, "a constraint must be a string such as \"tile <= grain\"");
      try {
        s.constraints.emplace_back(cs[i].get<std::string>(), s.params);
      } catch (const ConstraintError& e) {
        cx.fail(path, e.reason, e.column);  // column 1 of the string is its opening quote
      }
    }
  }
  if (doc.contains("default")) {
    try {
      s.defaults = s.fromJson(doc["default"]);
    } catch (const std::invalid_argument& e) {
      cx.fail("/default", e.what());
    }
    if (!s.legal(*s.defaults)) cx.fail("/default", "the default configuration violates a constraint");
  }
  bool any = false;
  std::mt19937_64 rng(1);
  if (s.constraints.empty()) any = true;
  else if (s.randomLegal(rng, 20000)) any = true;
  if (!any) cx.fail("/constraints", "no configuration satisfies every constraint");
  return s;
}

Space loadSpace(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UserError(Location::at(std::make_shared<const std::string>(path), 0, 0), "cannot read the space file");
  std::stringstream ss;
  ss << f.rdbuf();
  return parseSpace(ss.str(), path);
}

}  // namespace tawa::tune
