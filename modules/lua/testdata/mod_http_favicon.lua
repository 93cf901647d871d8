-- prosody-modules' mod_http_favicon as ported in docs/modules.md (a
-- shorter icon): load_resource replaced by cairn.cat of a CID.
module:depends("http")
local base64 = require "util.encodings".base64
local favicon = base64.decode[[
AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAAAQAAAAAAAAAAAAAAAAA
AAAAAAD///8AsuD6TGrE95Q=]]

local cid = module:get_option_string("favicon")
if cid then
	favicon = assert(cairn.cat("/ipfs/" .. cid))
end

module:provides("http", {
	default_path = "/favicon.ico",
	route = {
		GET = { headers = { content_type = "image/x-icon" }, body = favicon },
	},
})
