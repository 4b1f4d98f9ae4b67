// tawa-tune: `tawa tune` as a program of its own, for tests and for use before the subcommand is
// wired into tools/tawa. `tawa-tune ARGS` behaves exactly as `tawa tune ARGS`.
#include <iostream>
#include <vector>

#include "ir/Diagnostic.h"
#include "tune/TuneCommand.h"

int main(int argc, char** argv) {
  CLI::App app{"tawa-tune: the tuner of tawa (the same as `tawa tune`)"};
  app.require_subcommand(1);
  auto action = tawa::tune::addTuneCommand(app);
  std::vector<const char*> args = {argv[0], "tune"};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  try {
    app.parse(static_cast<int>(args.size()), const_cast<char**>(args.data()));
  } catch (const CLI::CallForHelp& e) {
    return app.get_subcommand("tune")->exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 1;
  }
  try {
    return action();
  } catch (const tawa::UserError& e) {
    std::cerr << e.format() << "\n";
    return 1;
  } catch (const tawa::InternalError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
}
