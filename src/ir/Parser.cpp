#include "ir/Parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace tawa::ir {

namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& filename)
      : s_(text), file_(std::make_shared<const std::string>(filename)) {}

  std::unique_ptr<Module> parse() {
    auto m = std::make_unique<Module>();
    skipWs();
    while (pos_ < s_.size()) {
      parseFunc(*m);
      skipWs();
    }
    return m;
  }

 private:
  // ---- character level
  Location here() const { return Location::at(file_, line_, col_); }
  [[noreturn]] void fail(const std::string& msg, std::string hint = {}) { throw UserError(here(), msg, std::move(hint)); }
  [[noreturn]] void failAt(const Location& l, const std::string& msg) { throw UserError(l, msg); }

  char peek(size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skipWs() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (peek() == '/' && peek(1) == '/') {
        while (pos_ < s_.size() && peek() != '\n') advance();
      } else {
        break;
      }
    }
  }
  bool tryConsume(std::string_view lit) {
    skipWs();
    if (s_.compare(pos_, lit.size(), lit) != 0) return false;
    for (size_t i = 0; i < lit.size(); ++i) advance();
    return true;
  }
  void expect(std::string_view lit, const char* what = nullptr) {
    if (!tryConsume(lit)) {
      std::string got = pos_ < s_.size() ? "'" + std::string(1, peek()) + "'" : "end of file";
      fail("expected '" + std::string(lit) + "'" + (what ? std::string(" ") + what : "") + ", found " + got);
    }
  }
  static bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
  std::string ident(const char* what) {
    skipWs();
    size_t b = pos_;
    while (pos_ < s_.size() && identChar(peek())) advance();
    if (b == pos_) fail(std::string("expected ") + what);
    return s_.substr(b, pos_ - b);
  }
  std::string stringLit() {
    skipWs();
    if (peek() != '"') fail("expected a string literal");
    Location start = here();
    advance();
    std::string out;
    while (true) {
      if (pos_ >= s_.size() || peek() == '\n') failAt(start, "unterminated string literal");
      char c = peek();
      advance();
      if (c == '"') break;
      if (c == '\\') {
        if (pos_ >= s_.size()) failAt(start, "unterminated string literal");
        char e = peek();
        advance();
        out += e == 'n' ? '\n' : e;
        continue;
      }
      out += c;
    }
    return out;
  }
  Type type() {
    skipWs();
    Location at = here();
    size_t b = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = peek();
      if (c == '<') ++depth;
      if (c == '>') {
        if (depth == 0) break;
        --depth;
      }
      if (depth == 0 && !(identChar(c) || c == '>')) break;
      advance();
      if (c == '>' && depth == 0) break;
    }
    std::string text = s_.substr(b, pos_ - b);
    if (text.empty()) fail("expected a type");
    std::string err;
    auto t = parseType(text, &err);
    if (!t) failAt(at, err);
    return *t;
  }

  // ---- values and scopes
  std::string valueName() {
    skipWs();
    if (peek() != '%') fail("expected a value name starting with '%'");
    advance();
    size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) advance();
    if (b == pos_) fail("expected a value name after '%'");
    return s_.substr(b, pos_ - b);
  }
  static std::string hintOf(const std::string& n) {
    return std::isdigit(static_cast<unsigned char>(n[0])) ? std::string() : n;
  }
  Value* lookup(const std::string& n, const Location& at) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(n);
      if (f != it->end()) return f->second;
    }
    if (everDefined_.count(n))
      failAt(at, "value '%" + n + "' is not visible here: it is defined inside a region that does not enclose this use");
    failAt(at, "use of undefined value '%" + n + "'");
  }
  void define(const std::string& n, Value* v, const Location& at) {
    for (auto& sc : scopes_)
      if (sc.count(n)) failAt(at, "redefinition of value '%" + n + "'");
    scopes_.back()[n] = v;
    everDefined_.insert({n, 0});
  }

  // ---- attributes
  AttrValue attrValue() {
    skipWs();
    char c = peek();
    if (c == '"') return stringLit();
    if (c == '[') {
      advance();
      std::vector<int64_t> v;
      skipWs();
      if (!tryConsume("]")) {
        do {
          skipWs();
          if (peek() == '[') fail("array attributes hold integers only, not arrays");  // before recursing: no stack to exhaust
          auto a = attrValue();
          if (!std::holds_alternative<int64_t>(a)) fail("array attributes hold integers only");
          v.push_back(std::get<int64_t>(a));
        } while (tryConsume(","));
        expect("]", "to close the array");
      }
      return v;
    }
    if (tryConsume("true")) return true;
    if (tryConsume("false")) return false;
    if (tryConsume("inf")) return std::numeric_limits<double>::infinity();
    if (tryConsume("-inf")) return -std::numeric_limits<double>::infinity();
    if (tryConsume("nan")) return std::numeric_limits<double>::quiet_NaN();
    size_t b = pos_;
    if (peek() == '-' || peek() == '+') advance();
    bool isF = false;
    while (pos_ < s_.size()) {
      char d = peek();
      if (std::isdigit(static_cast<unsigned char>(d))) {
        advance();
      } else if (d == '.' || d == 'e' || d == 'E') {
        isF = true;
        advance();
        if ((d == 'e' || d == 'E') && (peek() == '-' || peek() == '+')) advance();
      } else {
        break;
      }
    }
    std::string num = s_.substr(b, pos_ - b);
    if (num.empty() || num == "-" || num == "+") fail("expected an attribute value (integer, float, bool, string or [array])");
    if (isF) {
      double d = 0;
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), d);
      if (ec != std::errc() || p != num.data() + num.size()) fail("malformed float '" + num + "'");
      return d;
    }
    int64_t i = 0;
    const char* start = num.data() + (num[0] == '+' ? 1 : 0);
    auto [p, ec] = std::from_chars(start, num.data() + num.size(), i);
    if (ec != std::errc() || p != num.data() + num.size()) fail("malformed or out-of-range integer '" + num + "'");
    return i;
  }
  void attrDict(std::map<std::string, AttrValue>& out) {
    expect("{");
    skipWs();
    if (tryConsume("}")) return;
    do {
      Location at = (skipWs(), here());
      std::string k = ident("an attribute name");
      expect("=", "after the attribute name");
      if (out.count(k)) failAt(at, "duplicate attribute '" + k + "'");
      out[k] = attrValue();
    } while (tryConsume(","));
    expect("}", "to close the attribute dictionary");
  }
  void optLoc(Location& l) {
    if (!tryConsume("loc(")) return;
    std::string f = stringLit();
    expect(":");
    int line = intLit(), col = (expect(":"), intLit());
    expect(")", "to close loc(...)");
    auto it = files_.find(f);
    if (it == files_.end()) it = files_.emplace(f, std::make_shared<const std::string>(f)).first;
    l = Location::at(it->second, line, col);
  }
  int intLit() {
    skipWs();
    size_t b = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    if (b == pos_) fail("expected an integer");
    return std::stoi(s_.substr(b, pos_ - b));
  }

  // ---- structure
  void parseFunc(Module& m) {
    Location at = here();
    if (!tryConsume("tile.func")) fail("expected 'tile.func' at top level");
    expect("@", "before the function name");
    std::string name = ident("a function name");
    if (m.lookup(name)) failAt(at, "redefinition of function '@" + name + "'");
    Func* f = m.addFunc(name, at);
    scopes_.assign(1, {});
    everDefined_.clear();
    typedArgs(f->body, "to close the parameter list");
    if (tryConsume("->")) {
      expect("(");
      skipWs();
      if (!tryConsume(")")) {
        do f->resultTypes.push_back(type());
        while (tryConsume(","));
        expect(")", "to close the result types");
      }
    }
    if (tryConsume("attributes")) attrDict(f->attrs);
    regionBody(f->body, /*allowArgs=*/false);
    optLoc(f->loc);
  }

  // '(' [%name: type (',' %name: type)*] ')': the arguments of a function body or region.
  void typedArgs(Block& b, const char* closing) {
    expect("(");
    skipWs();
    if (tryConsume(")")) return;
    do {
      Location a = (skipWs(), here());
      std::string n = valueName();
      expect(":");
      define(n, b.addArg(type(), hintOf(n)), a);
    } while (tryConsume(","));
    expect(")", closing);
  }

  // '{' [^bb0(args):] op* '}'
  void regionBody(Block& b, bool allowArgs) {
    Location open = here();
    expect("{");
    // The parser, the verifier and every pass recurse into regions: a bounded nesting keeps a hostile
    // file from overflowing the stack. Real kernels nest a few levels.
    constexpr size_t kMaxRegionDepth = 64;
    if (scopes_.size() >= kMaxRegionDepth)
      failAt(open, "regions nested more than " + std::to_string(kMaxRegionDepth) + " levels deep");
    scopes_.emplace_back();
    skipWs();
    if (peek() == '^') {
      Location at = here();
      if (!allowArgs) failAt(at, "a function body takes no block arguments; declare them as parameters");
      advance();
      ident("a block label");
      typedArgs(b, "to close the block arguments");
      expect(":", "after the block arguments");
    }
    while (true) {
      skipWs();
      if (pos_ >= s_.size()) fail("expected '}' to close the region, found end of file");
      if (peek() == '}') break;
      parseOp(b);
    }
    advance();
    scopes_.pop_back();
  }

  void parseOp(Block& b) {
    Location at = here();
    std::vector<std::pair<std::string, Location>> resultNames;
    if (peek() == '%') {
      do {
        Location a = (skipWs(), here());
        resultNames.push_back({valueName(), a});
      } while (tryConsume(","));
      expect("=", "after the result names");
    }
    skipWs();
    Location nameAt = here();
    std::string name = ident("an op name");
    OpKind kind;
    if (!lookupOpKind(name, &kind)) failAt(nameAt, "unknown op '" + name + "'");
    auto op = std::make_unique<Op>(kind, at);
    if (kind == OpKind::Call) {
      expect("@", "before the callee name");
      op->attrs["callee"] = ident("a callee name");
      expect("(");
      skipWs();
      if (!tryConsume(")")) {
        do {
          Location a = (skipWs(), here());
          op->operands.push_back(lookup(valueName(), a));
        } while (tryConsume(","));
        expect(")", "to close the call arguments");
      }
    } else {
      skipWs();
      if (peek() == '%') {
        do {
          Location a = (skipWs(), here());
          op->operands.push_back(lookup(valueName(), a));
        } while (tryConsume(","));
      }
    }
    skipWs();
    if (peek() == '{' && !looksLikeRegion()) attrDict(op->attrs);
    std::vector<Type> types;
    if (tryConsume(":")) {
      do types.push_back(type());
      while (tryConsume(","));
    }
    if (types.size() != resultNames.size())
      failAt(at, "'" + name + "' names " + std::to_string(resultNames.size()) + " result(s) but lists " +
                     std::to_string(types.size()) + " result type(s)");
    for (size_t i = 0; i < types.size(); ++i) op->addResult(types[i], hintOf(resultNames[i].first));
    skipWs();
    while (peek() == '{') {
      Block* r = op->addRegion();
      regionBody(*r, true);
      skipWs();
    }
    optLoc(const_cast<Location&>(op->loc()));
    for (size_t i = 0; i < resultNames.size(); ++i) define(resultNames[i].first, op->result(i), resultNames[i].second);
    b.append(std::move(op));
  }

  // After an op's operands, '{' opens either an attribute dictionary ({name = ...}) or a region
  // ({ followed by ops, a block header or '}').
  bool looksLikeRegion() {
    size_t p = pos_ + 1;
    while (p < s_.size() && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
    if (p >= s_.size()) return true;
    if (s_[p] == '}' || s_[p] == '^' || s_[p] == '%') return true;
    size_t q = p;
    while (q < s_.size() && identChar(s_[q])) ++q;
    while (q < s_.size() && s_[q] == ' ') ++q;
    return !(q < s_.size() && s_[q] == '=');
  }

  const std::string& s_;
  std::shared_ptr<const std::string> file_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  std::unordered_map<std::string, int> everDefined_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> files_;
};

}  // namespace

std::unique_ptr<Module> parseModule(const std::string& text, const std::string& filename) {
  Parser p(text, filename);
  return p.parse();
}

std::unique_ptr<Module> parseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(Location::at(std::make_shared<const std::string>(path), 0, 0), "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseModule(ss.str(), path);
}

}  // namespace tawa::ir
