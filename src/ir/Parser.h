// Parses tawa's text IR (.tir). Every syntax error, unknown op or type, undefined or redefined value
// is a UserError at the offending file:line:col. Ops without an explicit loc(...) are located at
// their own position in the .tir text. The result is not verified: run ir::verify next.
#pragma once

#include <memory>
#include <string>

#include "ir/IR.h"

namespace tawa::ir {

std::unique_ptr<Module> parseModule(const std::string& text, const std::string& filename);
std::unique_ptr<Module> parseFile(const std::string& path);  // UserError if unreadable

}  // namespace tawa::ir
