// Asio is compiled once, here (ASIO_SEPARATE_COMPILATION), instead of in every
// translation unit that includes an Asio header.
#include <asio/impl/src.hpp>
