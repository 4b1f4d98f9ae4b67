#include "ir/Printer.h"

#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tawa::ir {

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string formatDouble(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, p);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

class Printer {
 public:
  Printer(std::ostream& os, const PrintOptions& opt) : os_(os), opt_(opt) {}

  void printFunc(const Func& f) {
    names_.clear();
    used_.clear();
    counter_ = 0;
    os_ << "tile.func @" << f.name << "(";
    for (size_t i = 0; i < f.numArgs(); ++i) {
      if (i) os_ << ", ";
      os_ << name(f.arg(i)) << ": " << f.arg(i)->type().str();
    }
    os_ << ")";
    if (!f.resultTypes.empty()) {
      os_ << " -> (";
      for (size_t i = 0; i < f.resultTypes.size(); ++i) os_ << (i ? ", " : "") << f.resultTypes[i].str();
      os_ << ")";
    }
    if (!f.attrs.empty()) {
      os_ << " attributes ";
      printAttrs(f.attrs);
    }
    os_ << " {\n";
    printOps(f.body, 1);
    os_ << "}";
    printLoc(f.loc);
    os_ << "\n";
  }

 private:
  std::string name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base;
    for (char c : v->nameHint)
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') base += c;
    bool numeric = !base.empty() && std::isdigit(static_cast<unsigned char>(base[0]));
    std::string n;
    if (base.empty() || numeric) {
      do n = std::to_string(counter_++);
      while (used_.count(n));
    } else {
      n = base;
      for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
    }
    used_.insert(n);
    return names_[v] = "%" + n;
  }

  void printAttrs(const std::map<std::string, AttrValue>& attrs) {
    os_ << "{";
    bool first = true;
    for (auto& [k, v] : attrs) {
      os_ << (first ? "" : ", ") << k << " = " << printAttr(v);
      first = false;
    }
    os_ << "}";
  }

  void printLoc(const Location& l) {
    if (opt_.locations && l.known()) os_ << " loc(" << quote(*l.file) << ":" << l.line << ":" << l.col << ")";
  }

  void printOps(const Block& b, int indent) {
    for (auto& op : b.ops()) printOp(*op, indent);
  }

  void printOp(const Op& op, int indent) {
    std::string pad(indent * 2, ' ');
    os_ << pad;
    for (size_t i = 0; i < op.numResults(); ++i) os_ << (i ? ", " : "") << name(op.result(i));
    if (op.numResults()) os_ << " = ";
    os_ << op.name();
    auto attrs = op.attrs;
    if (op.kind() == OpKind::Call) {
      os_ << " @" << std::get<std::string>(attrs.at("callee")) << "(";
      attrs.erase("callee");
      for (size_t i = 0; i < op.numOperands(); ++i) os_ << (i ? ", " : "") << name(op.operand(i));
      os_ << ")";
    } else {
      for (size_t i = 0; i < op.numOperands(); ++i) os_ << (i ? ", " : " ") << name(op.operand(i));
    }
    if (!attrs.empty()) {
      os_ << " ";
      printAttrs(attrs);
    }
    if (op.numResults()) {
      os_ << " : ";
      for (size_t i = 0; i < op.numResults(); ++i) os_ << (i ? ", " : "") << op.result(i)->type().str();
    }
    for (auto& r : op.regions()) {
      os_ << " {\n";
      if (!r->args().empty()) {
        os_ << pad << "^bb0(";
        for (size_t i = 0; i < r->args().size(); ++i)
          os_ << (i ? ", " : "") << name(r->arg(i)) << ": " << r->arg(i)->type().str();
        os_ << "):\n";
      }
      printOps(*r, indent + 1);
      os_ << pad << "}";
    }
    printLoc(op.loc());
    os_ << "\n";
  }

  std::ostream& os_;
  const PrintOptions& opt_;
  std::unordered_map<const Value*, std::string> names_;
  std::set<std::string> used_;
  int counter_ = 0;
};

}  // namespace

std::string printAttr(const AttrValue& a) {
  return std::visit(
      [](auto&& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<V, double>) return formatDouble(v);
        else if constexpr (std::is_same_v<V, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<V, std::string>) return quote(v);
        else {
          std::string s = "[";
          for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
          return s + "]";
        }
      },
      a);
}

void print(const Module& m, std::ostream& os, const PrintOptions& opt) {
  Printer p(os, opt);
  for (size_t i = 0; i < m.funcs.size(); ++i) {
    if (i) os << "\n";
    p.printFunc(*m.funcs[i]);
  }
}

std::string print(const Module& m, const PrintOptions& opt) {
  std::ostringstream os;
  print(m, os, opt);
  return os.str();
}

}  // namespace tawa::ir
