// Where aggnet's shipped data lives (platforms/, scripts/, sweeps/): found at run time
// from the executable, so no source path is compiled into the binary.
#pragma once

#include <string>

namespace aggnet {

/// $AGGNET_DATA_DIR if set; else <executable dir>/../share/aggnet when it holds
/// platforms/ (an installed tree); else the nearest ancestor of the executable's
/// directory holding platforms/nine_city.yaml (a build tree inside the checkout);
/// else "" (callers then rely on the working directory).
std::string data_dir();

}  // namespace aggnet
