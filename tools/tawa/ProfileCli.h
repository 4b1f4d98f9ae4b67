// `tawa profile` on the command line (ProfileCli.cpp), and how every command reports its errors:
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

// Runs a command, printing what it throws as the command line reports it: a user's mistake (a
// located diagnostic) is status 1, anything else an internal error, status 2.
int reportErrors(const std::function<int()>& command);

}  // namespace tawa::cli
