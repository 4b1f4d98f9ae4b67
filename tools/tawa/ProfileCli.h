// `tawa profile` on the command line (ProfileCli.cpp):
//
//   std::function<int()> profileAction;
//   tawa::cli::addProfileCommand(app, profileAction);   // before app.parse
//   if (profileAction) return profileAction();           // after parsing
//
// The action is set only when `profile` was parsed. It prints user errors itself and returns 1.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace tawa::cli {

void addProfileCommand(CLI::App& app, std::function<int()>& action);

}  // namespace tawa::cli
