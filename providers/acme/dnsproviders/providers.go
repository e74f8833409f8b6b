// Code generated from lego v5.6.0's provider registry (lego_dnslight's
// providers/dns/internal/dnslight): every provider whose dependencies the
// module proxy serves and that builds with Go 1.26. DO NOT EDIT by hand.

package dnsproviders

import (
	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/providers/dns/abion"
	"github.com/go-acme/lego/v5/providers/dns/acmedns"
	"github.com/go-acme/lego/v5/providers/dns/active24"
	"github.com/go-acme/lego/v5/providers/dns/allinkl"
	"github.com/go-acme/lego/v5/providers/dns/alwaysdata"
	"github.com/go-acme/lego/v5/providers/dns/anexia"
	"github.com/go-acme/lego/v5/providers/dns/artfiles"
	"github.com/go-acme/lego/v5/providers/dns/arvancloud"
	"github.com/go-acme/lego/v5/providers/dns/auroradns"
	"github.com/go-acme/lego/v5/providers/dns/autodns"
	"github.com/go-acme/lego/v5/providers/dns/axelname"
	"github.com/go-acme/lego/v5/providers/dns/baiducloud"
	"github.com/go-acme/lego/v5/providers/dns/beget"
	"github.com/go-acme/lego/v5/providers/dns/binarylane"
	"github.com/go-acme/lego/v5/providers/dns/bindman"
	"github.com/go-acme/lego/v5/providers/dns/bluecat"
	"github.com/go-acme/lego/v5/providers/dns/bluecatv2"
	"github.com/go-acme/lego/v5/providers/dns/bookmyname"
	"github.com/go-acme/lego/v5/providers/dns/bunny"
	"github.com/go-acme/lego/v5/providers/dns/checkdomain"
	"github.com/go-acme/lego/v5/providers/dns/civo"
	"github.com/go-acme/lego/v5/providers/dns/clouddns"
	"github.com/go-acme/lego/v5/providers/dns/cloudflare"
	"github.com/go-acme/lego/v5/providers/dns/cloudns"
	"github.com/go-acme/lego/v5/providers/dns/cloudpress"
	"github.com/go-acme/lego/v5/providers/dns/cloudru"
	"github.com/go-acme/lego/v5/providers/dns/com35"
	"github.com/go-acme/lego/v5/providers/dns/connbyte"
	"github.com/go-acme/lego/v5/providers/dns/conoha"
	"github.com/go-acme/lego/v5/providers/dns/conohav3"
	"github.com/go-acme/lego/v5/providers/dns/constellix"
	"github.com/go-acme/lego/v5/providers/dns/corenetworks"
	"github.com/go-acme/lego/v5/providers/dns/cpanel"
	"github.com/go-acme/lego/v5/providers/dns/curanet"
	"github.com/go-acme/lego/v5/providers/dns/czechia"
	"github.com/go-acme/lego/v5/providers/dns/dandomain"
	"github.com/go-acme/lego/v5/providers/dns/ddnss"
	"github.com/go-acme/lego/v5/providers/dns/derak"
	"github.com/go-acme/lego/v5/providers/dns/digitalocean"
	"github.com/go-acme/lego/v5/providers/dns/dinahosting"
	"github.com/go-acme/lego/v5/providers/dns/directadmin"
	"github.com/go-acme/lego/v5/providers/dns/dns51"
	"github.com/go-acme/lego/v5/providers/dns/dnscale"
	"github.com/go-acme/lego/v5/providers/dns/dnsexit"
	"github.com/go-acme/lego/v5/providers/dns/dnshomede"
	"github.com/go-acme/lego/v5/providers/dns/dnsla"
	"github.com/go-acme/lego/v5/providers/dns/dnsmadeeasy"
	"github.com/go-acme/lego/v5/providers/dns/dnsmint"
	"github.com/go-acme/lego/v5/providers/dns/dnsservices"
	"github.com/go-acme/lego/v5/providers/dns/dnsupdate"
	"github.com/go-acme/lego/v5/providers/dns/dode"
	"github.com/go-acme/lego/v5/providers/dns/domeneshop"
	"github.com/go-acme/lego/v5/providers/dns/dreamhost"
	"github.com/go-acme/lego/v5/providers/dns/duckdns"
	"github.com/go-acme/lego/v5/providers/dns/dyn"
	"github.com/go-acme/lego/v5/providers/dns/dynadot"
	"github.com/go-acme/lego/v5/providers/dns/dyndnsfree"
	"github.com/go-acme/lego/v5/providers/dns/dynu"
	"github.com/go-acme/lego/v5/providers/dns/easydns"
	"github.com/go-acme/lego/v5/providers/dns/edgecenter"
	"github.com/go-acme/lego/v5/providers/dns/efficientip"
	"github.com/go-acme/lego/v5/providers/dns/epik"
	"github.com/go-acme/lego/v5/providers/dns/eurodns"
	"github.com/go-acme/lego/v5/providers/dns/euserv"
	"github.com/go-acme/lego/v5/providers/dns/excedo"
	"github.com/go-acme/lego/v5/providers/dns/exec"
	"github.com/go-acme/lego/v5/providers/dns/f5xc"
	"github.com/go-acme/lego/v5/providers/dns/feno"
	"github.com/go-acme/lego/v5/providers/dns/fornex"
	"github.com/go-acme/lego/v5/providers/dns/freemyip"
	"github.com/go-acme/lego/v5/providers/dns/gandi"
	"github.com/go-acme/lego/v5/providers/dns/gandiv5"
	"github.com/go-acme/lego/v5/providers/dns/gcloud"
	"github.com/go-acme/lego/v5/providers/dns/gcore"
	"github.com/go-acme/lego/v5/providers/dns/gehirn"
	"github.com/go-acme/lego/v5/providers/dns/gigahostno"
	"github.com/go-acme/lego/v5/providers/dns/glesys"
	"github.com/go-acme/lego/v5/providers/dns/gname"
	"github.com/go-acme/lego/v5/providers/dns/godaddy"
	"github.com/go-acme/lego/v5/providers/dns/godaddyv3"
	"github.com/go-acme/lego/v5/providers/dns/gravity"
	"github.com/go-acme/lego/v5/providers/dns/hetzner"
	"github.com/go-acme/lego/v5/providers/dns/hostingde"
	"github.com/go-acme/lego/v5/providers/dns/hostinger"
	"github.com/go-acme/lego/v5/providers/dns/hostingnl"
	"github.com/go-acme/lego/v5/providers/dns/hosttech"
	"github.com/go-acme/lego/v5/providers/dns/hostup"
	"github.com/go-acme/lego/v5/providers/dns/httpnet"
	"github.com/go-acme/lego/v5/providers/dns/httpreq"
	"github.com/go-acme/lego/v5/providers/dns/hurricane"
	"github.com/go-acme/lego/v5/providers/dns/hyperone"
	"github.com/go-acme/lego/v5/providers/dns/ibmcloud"
	"github.com/go-acme/lego/v5/providers/dns/iijdpf"
	"github.com/go-acme/lego/v5/providers/dns/infoblox"
	"github.com/go-acme/lego/v5/providers/dns/infomaniak"
	"github.com/go-acme/lego/v5/providers/dns/internetbs"
	"github.com/go-acme/lego/v5/providers/dns/inwx"
	"github.com/go-acme/lego/v5/providers/dns/ionos"
	"github.com/go-acme/lego/v5/providers/dns/ionoscloud"
	"github.com/go-acme/lego/v5/providers/dns/ipv64"
	"github.com/go-acme/lego/v5/providers/dns/ispconfig"
	"github.com/go-acme/lego/v5/providers/dns/ispconfigddns"
	"github.com/go-acme/lego/v5/providers/dns/jdcloud"
	"github.com/go-acme/lego/v5/providers/dns/joker"
	"github.com/go-acme/lego/v5/providers/dns/katapult"
	"github.com/go-acme/lego/v5/providers/dns/keyhelp"
	"github.com/go-acme/lego/v5/providers/dns/leaseweb"
	"github.com/go-acme/lego/v5/providers/dns/liara"
	"github.com/go-acme/lego/v5/providers/dns/lightsail"
	"github.com/go-acme/lego/v5/providers/dns/limacity"
	"github.com/go-acme/lego/v5/providers/dns/liquidweb"
	"github.com/go-acme/lego/v5/providers/dns/loopia"
	"github.com/go-acme/lego/v5/providers/dns/luadns"
	"github.com/go-acme/lego/v5/providers/dns/mailinabox"
	"github.com/go-acme/lego/v5/providers/dns/manageengine"
	"github.com/go-acme/lego/v5/providers/dns/manual"
	"github.com/go-acme/lego/v5/providers/dns/metaname"
	"github.com/go-acme/lego/v5/providers/dns/metaregistrar"
	"github.com/go-acme/lego/v5/providers/dns/mijnhost"
	"github.com/go-acme/lego/v5/providers/dns/mittwald"
	"github.com/go-acme/lego/v5/providers/dns/myaddr"
	"github.com/go-acme/lego/v5/providers/dns/mydnsjp"
	"github.com/go-acme/lego/v5/providers/dns/mythicbeasts"
	"github.com/go-acme/lego/v5/providers/dns/namecheap"
	"github.com/go-acme/lego/v5/providers/dns/namedotcom"
	"github.com/go-acme/lego/v5/providers/dns/namesilo"
	"github.com/go-acme/lego/v5/providers/dns/namesurfer"
	"github.com/go-acme/lego/v5/providers/dns/nearlyfreespeech"
	"github.com/go-acme/lego/v5/providers/dns/nederhost"
	"github.com/go-acme/lego/v5/providers/dns/neodigit"
	"github.com/go-acme/lego/v5/providers/dns/netcup"
	"github.com/go-acme/lego/v5/providers/dns/netcupv1"
	"github.com/go-acme/lego/v5/providers/dns/netlify"
	"github.com/go-acme/lego/v5/providers/dns/netnod"
	"github.com/go-acme/lego/v5/providers/dns/nexdns"
	"github.com/go-acme/lego/v5/providers/dns/ngenix"
	"github.com/go-acme/lego/v5/providers/dns/nicmanager"
	"github.com/go-acme/lego/v5/providers/dns/nicru"
	"github.com/go-acme/lego/v5/providers/dns/nifcloud"
	"github.com/go-acme/lego/v5/providers/dns/njalla"
	"github.com/go-acme/lego/v5/providers/dns/nodion"
	"github.com/go-acme/lego/v5/providers/dns/nordname"
	"github.com/go-acme/lego/v5/providers/dns/ns1"
	"github.com/go-acme/lego/v5/providers/dns/octenium"
	"github.com/go-acme/lego/v5/providers/dns/omglol"
	"github.com/go-acme/lego/v5/providers/dns/onecloudru"
	"github.com/go-acme/lego/v5/providers/dns/onlinenet"
	"github.com/go-acme/lego/v5/providers/dns/openprovider"
	"github.com/go-acme/lego/v5/providers/dns/opusdns"
	"github.com/go-acme/lego/v5/providers/dns/otc"
	"github.com/go-acme/lego/v5/providers/dns/ovh"
	"github.com/go-acme/lego/v5/providers/dns/pdns"
	"github.com/go-acme/lego/v5/providers/dns/plesk"
	"github.com/go-acme/lego/v5/providers/dns/pointdns"
	"github.com/go-acme/lego/v5/providers/dns/porkbun"
	"github.com/go-acme/lego/v5/providers/dns/poweradmin"
	"github.com/go-acme/lego/v5/providers/dns/primedns"
	"github.com/go-acme/lego/v5/providers/dns/rackspace"
	"github.com/go-acme/lego/v5/providers/dns/rage4"
	"github.com/go-acme/lego/v5/providers/dns/rainyun"
	"github.com/go-acme/lego/v5/providers/dns/rcodezero"
	"github.com/go-acme/lego/v5/providers/dns/regru"
	"github.com/go-acme/lego/v5/providers/dns/rimuhosting"
	"github.com/go-acme/lego/v5/providers/dns/route53"
	"github.com/go-acme/lego/v5/providers/dns/safedns"
	"github.com/go-acme/lego/v5/providers/dns/scaleway"
	"github.com/go-acme/lego/v5/providers/dns/scannet"
	"github.com/go-acme/lego/v5/providers/dns/selectel"
	"github.com/go-acme/lego/v5/providers/dns/selfhostde"
	"github.com/go-acme/lego/v5/providers/dns/selfhostdev2"
	"github.com/go-acme/lego/v5/providers/dns/servercow"
	"github.com/go-acme/lego/v5/providers/dns/shellrent"
	"github.com/go-acme/lego/v5/providers/dns/simply"
	"github.com/go-acme/lego/v5/providers/dns/sonic"
	"github.com/go-acme/lego/v5/providers/dns/spaceship"
	"github.com/go-acme/lego/v5/providers/dns/stackpath"
	"github.com/go-acme/lego/v5/providers/dns/syse"
	"github.com/go-acme/lego/v5/providers/dns/technitium"
	"github.com/go-acme/lego/v5/providers/dns/tele3"
	"github.com/go-acme/lego/v5/providers/dns/timewebcloud"
	"github.com/go-acme/lego/v5/providers/dns/todaynic"
	"github.com/go-acme/lego/v5/providers/dns/transip"
	"github.com/go-acme/lego/v5/providers/dns/uniteddomains"
	"github.com/go-acme/lego/v5/providers/dns/variomedia"
	"github.com/go-acme/lego/v5/providers/dns/veesp"
	"github.com/go-acme/lego/v5/providers/dns/vegadns"
	"github.com/go-acme/lego/v5/providers/dns/vercel"
	"github.com/go-acme/lego/v5/providers/dns/versio"
	"github.com/go-acme/lego/v5/providers/dns/vinyldns"
	"github.com/go-acme/lego/v5/providers/dns/virtualname"
	"github.com/go-acme/lego/v5/providers/dns/vkcloud"
	"github.com/go-acme/lego/v5/providers/dns/vscale"
	"github.com/go-acme/lego/v5/providers/dns/vultr"
	"github.com/go-acme/lego/v5/providers/dns/wannafind"
	"github.com/go-acme/lego/v5/providers/dns/webglobe"
	"github.com/go-acme/lego/v5/providers/dns/webnamesca"
	"github.com/go-acme/lego/v5/providers/dns/webnamesru"
	"github.com/go-acme/lego/v5/providers/dns/websupport"
	"github.com/go-acme/lego/v5/providers/dns/wedos"
	"github.com/go-acme/lego/v5/providers/dns/westcn"
	"github.com/go-acme/lego/v5/providers/dns/xinnet"
	"github.com/go-acme/lego/v5/providers/dns/yandex"
	"github.com/go-acme/lego/v5/providers/dns/yandex360"
	"github.com/go-acme/lego/v5/providers/dns/zilore"
	"github.com/go-acme/lego/v5/providers/dns/zoneedit"
	"github.com/go-acme/lego/v5/providers/dns/zoneee"
	"github.com/go-acme/lego/v5/providers/dns/zonomi"
)

// providers maps lego's provider codes (Traefik's dnsChallenge.provider
// names) to their constructors. Each reads its own environment variables.
var providers = map[string]func() (challenge.Provider, error){
	"abion":            func() (challenge.Provider, error) { return abion.NewDNSProvider() },
	"acmedns":          func() (challenge.Provider, error) { return acmedns.NewDNSProvider() },
	"active24":         func() (challenge.Provider, error) { return active24.NewDNSProvider() },
	"allinkl":          func() (challenge.Provider, error) { return allinkl.NewDNSProvider() },
	"alwaysdata":       func() (challenge.Provider, error) { return alwaysdata.NewDNSProvider() },
	"anexia":           func() (challenge.Provider, error) { return anexia.NewDNSProvider() },
	"artfiles":         func() (challenge.Provider, error) { return artfiles.NewDNSProvider() },
	"arvancloud":       func() (challenge.Provider, error) { return arvancloud.NewDNSProvider() },
	"auroradns":        func() (challenge.Provider, error) { return auroradns.NewDNSProvider() },
	"autodns":          func() (challenge.Provider, error) { return autodns.NewDNSProvider() },
	"axelname":         func() (challenge.Provider, error) { return axelname.NewDNSProvider() },
	"baiducloud":       func() (challenge.Provider, error) { return baiducloud.NewDNSProvider() },
	"beget":            func() (challenge.Provider, error) { return beget.NewDNSProvider() },
	"binarylane":       func() (challenge.Provider, error) { return binarylane.NewDNSProvider() },
	"bindman":          func() (challenge.Provider, error) { return bindman.NewDNSProvider() },
	"bluecat":          func() (challenge.Provider, error) { return bluecat.NewDNSProvider() },
	"bluecatv2":        func() (challenge.Provider, error) { return bluecatv2.NewDNSProvider() },
	"bookmyname":       func() (challenge.Provider, error) { return bookmyname.NewDNSProvider() },
	"bunny":            func() (challenge.Provider, error) { return bunny.NewDNSProvider() },
	"checkdomain":      func() (challenge.Provider, error) { return checkdomain.NewDNSProvider() },
	"civo":             func() (challenge.Provider, error) { return civo.NewDNSProvider() },
	"clouddns":         func() (challenge.Provider, error) { return clouddns.NewDNSProvider() },
	"cloudflare":       func() (challenge.Provider, error) { return cloudflare.NewDNSProvider() },
	"cloudns":          func() (challenge.Provider, error) { return cloudns.NewDNSProvider() },
	"cloudpress":       func() (challenge.Provider, error) { return cloudpress.NewDNSProvider() },
	"cloudru":          func() (challenge.Provider, error) { return cloudru.NewDNSProvider() },
	"com35":            func() (challenge.Provider, error) { return com35.NewDNSProvider() },
	"connbyte":         func() (challenge.Provider, error) { return connbyte.NewDNSProvider() },
	"conoha":           func() (challenge.Provider, error) { return conoha.NewDNSProvider() },
	"conohav3":         func() (challenge.Provider, error) { return conohav3.NewDNSProvider() },
	"constellix":       func() (challenge.Provider, error) { return constellix.NewDNSProvider() },
	"corenetworks":     func() (challenge.Provider, error) { return corenetworks.NewDNSProvider() },
	"cpanel":           func() (challenge.Provider, error) { return cpanel.NewDNSProvider() },
	"curanet":          func() (challenge.Provider, error) { return curanet.NewDNSProvider() },
	"czechia":          func() (challenge.Provider, error) { return czechia.NewDNSProvider() },
	"dandomain":        func() (challenge.Provider, error) { return dandomain.NewDNSProvider() },
	"ddnss":            func() (challenge.Provider, error) { return ddnss.NewDNSProvider() },
	"derak":            func() (challenge.Provider, error) { return derak.NewDNSProvider() },
	"digitalocean":     func() (challenge.Provider, error) { return digitalocean.NewDNSProvider() },
	"dinahosting":      func() (challenge.Provider, error) { return dinahosting.NewDNSProvider() },
	"directadmin":      func() (challenge.Provider, error) { return directadmin.NewDNSProvider() },
	"dns51":            func() (challenge.Provider, error) { return dns51.NewDNSProvider() },
	"dnscale":          func() (challenge.Provider, error) { return dnscale.NewDNSProvider() },
	"dnsexit":          func() (challenge.Provider, error) { return dnsexit.NewDNSProvider() },
	"dnshomede":        func() (challenge.Provider, error) { return dnshomede.NewDNSProvider() },
	"dnsla":            func() (challenge.Provider, error) { return dnsla.NewDNSProvider() },
	"dnsmadeeasy":      func() (challenge.Provider, error) { return dnsmadeeasy.NewDNSProvider() },
	"dnsmint":          func() (challenge.Provider, error) { return dnsmint.NewDNSProvider() },
	"dnsservices":      func() (challenge.Provider, error) { return dnsservices.NewDNSProvider() },
	"dnsupdate":        func() (challenge.Provider, error) { return dnsupdate.NewDNSProvider() },
	"dode":             func() (challenge.Provider, error) { return dode.NewDNSProvider() },
	"domeneshop":       func() (challenge.Provider, error) { return domeneshop.NewDNSProvider() },
	"dreamhost":        func() (challenge.Provider, error) { return dreamhost.NewDNSProvider() },
	"duckdns":          func() (challenge.Provider, error) { return duckdns.NewDNSProvider() },
	"dyn":              func() (challenge.Provider, error) { return dyn.NewDNSProvider() },
	"dynadot":          func() (challenge.Provider, error) { return dynadot.NewDNSProvider() },
	"dyndnsfree":       func() (challenge.Provider, error) { return dyndnsfree.NewDNSProvider() },
	"dynu":             func() (challenge.Provider, error) { return dynu.NewDNSProvider() },
	"easydns":          func() (challenge.Provider, error) { return easydns.NewDNSProvider() },
	"edgecenter":       func() (challenge.Provider, error) { return edgecenter.NewDNSProvider() },
	"efficientip":      func() (challenge.Provider, error) { return efficientip.NewDNSProvider() },
	"epik":             func() (challenge.Provider, error) { return epik.NewDNSProvider() },
	"eurodns":          func() (challenge.Provider, error) { return eurodns.NewDNSProvider() },
	"euserv":           func() (challenge.Provider, error) { return euserv.NewDNSProvider() },
	"excedo":           func() (challenge.Provider, error) { return excedo.NewDNSProvider() },
	"exec":             func() (challenge.Provider, error) { return exec.NewDNSProvider() },
	"f5xc":             func() (challenge.Provider, error) { return f5xc.NewDNSProvider() },
	"feno":             func() (challenge.Provider, error) { return feno.NewDNSProvider() },
	"fornex":           func() (challenge.Provider, error) { return fornex.NewDNSProvider() },
	"freemyip":         func() (challenge.Provider, error) { return freemyip.NewDNSProvider() },
	"gandi":            func() (challenge.Provider, error) { return gandi.NewDNSProvider() },
	"gandiv5":          func() (challenge.Provider, error) { return gandiv5.NewDNSProvider() },
	"gcloud":           func() (challenge.Provider, error) { return gcloud.NewDNSProvider() },
	"gcore":            func() (challenge.Provider, error) { return gcore.NewDNSProvider() },
	"gehirn":           func() (challenge.Provider, error) { return gehirn.NewDNSProvider() },
	"gigahostno":       func() (challenge.Provider, error) { return gigahostno.NewDNSProvider() },
	"glesys":           func() (challenge.Provider, error) { return glesys.NewDNSProvider() },
	"gname":            func() (challenge.Provider, error) { return gname.NewDNSProvider() },
	"godaddy":          func() (challenge.Provider, error) { return godaddy.NewDNSProvider() },
	"godaddyv3":        func() (challenge.Provider, error) { return godaddyv3.NewDNSProvider() },
	"gravity":          func() (challenge.Provider, error) { return gravity.NewDNSProvider() },
	"hetzner":          func() (challenge.Provider, error) { return hetzner.NewDNSProvider() },
	"hostingde":        func() (challenge.Provider, error) { return hostingde.NewDNSProvider() },
	"hostinger":        func() (challenge.Provider, error) { return hostinger.NewDNSProvider() },
	"hostingnl":        func() (challenge.Provider, error) { return hostingnl.NewDNSProvider() },
	"hosttech":         func() (challenge.Provider, error) { return hosttech.NewDNSProvider() },
	"hostup":           func() (challenge.Provider, error) { return hostup.NewDNSProvider() },
	"httpnet":          func() (challenge.Provider, error) { return httpnet.NewDNSProvider() },
	"httpreq":          func() (challenge.Provider, error) { return httpreq.NewDNSProvider() },
	"hurricane":        func() (challenge.Provider, error) { return hurricane.NewDNSProvider() },
	"hyperone":         func() (challenge.Provider, error) { return hyperone.NewDNSProvider() },
	"ibmcloud":         func() (challenge.Provider, error) { return ibmcloud.NewDNSProvider() },
	"iijdpf":           func() (challenge.Provider, error) { return iijdpf.NewDNSProvider() },
	"infoblox":         func() (challenge.Provider, error) { return infoblox.NewDNSProvider() },
	"infomaniak":       func() (challenge.Provider, error) { return infomaniak.NewDNSProvider() },
	"internetbs":       func() (challenge.Provider, error) { return internetbs.NewDNSProvider() },
	"inwx":             func() (challenge.Provider, error) { return inwx.NewDNSProvider() },
	"ionos":            func() (challenge.Provider, error) { return ionos.NewDNSProvider() },
	"ionoscloud":       func() (challenge.Provider, error) { return ionoscloud.NewDNSProvider() },
	"ipv64":            func() (challenge.Provider, error) { return ipv64.NewDNSProvider() },
	"ispconfig":        func() (challenge.Provider, error) { return ispconfig.NewDNSProvider() },
	"ispconfigddns":    func() (challenge.Provider, error) { return ispconfigddns.NewDNSProvider() },
	"jdcloud":          func() (challenge.Provider, error) { return jdcloud.NewDNSProvider() },
	"joker":            func() (challenge.Provider, error) { return joker.NewDNSProvider() },
	"katapult":         func() (challenge.Provider, error) { return katapult.NewDNSProvider() },
	"keyhelp":          func() (challenge.Provider, error) { return keyhelp.NewDNSProvider() },
	"leaseweb":         func() (challenge.Provider, error) { return leaseweb.NewDNSProvider() },
	"liara":            func() (challenge.Provider, error) { return liara.NewDNSProvider() },
	"lightsail":        func() (challenge.Provider, error) { return lightsail.NewDNSProvider() },
	"limacity":         func() (challenge.Provider, error) { return limacity.NewDNSProvider() },
	"liquidweb":        func() (challenge.Provider, error) { return liquidweb.NewDNSProvider() },
	"loopia":           func() (challenge.Provider, error) { return loopia.NewDNSProvider() },
	"luadns":           func() (challenge.Provider, error) { return luadns.NewDNSProvider() },
	"mailinabox":       func() (challenge.Provider, error) { return mailinabox.NewDNSProvider() },
	"manageengine":     func() (challenge.Provider, error) { return manageengine.NewDNSProvider() },
	"manual":           func() (challenge.Provider, error) { return manual.NewDNSProvider() },
	"metaname":         func() (challenge.Provider, error) { return metaname.NewDNSProvider() },
	"metaregistrar":    func() (challenge.Provider, error) { return metaregistrar.NewDNSProvider() },
	"mijnhost":         func() (challenge.Provider, error) { return mijnhost.NewDNSProvider() },
	"mittwald":         func() (challenge.Provider, error) { return mittwald.NewDNSProvider() },
	"myaddr":           func() (challenge.Provider, error) { return myaddr.NewDNSProvider() },
	"mydnsjp":          func() (challenge.Provider, error) { return mydnsjp.NewDNSProvider() },
	"mythicbeasts":     func() (challenge.Provider, error) { return mythicbeasts.NewDNSProvider() },
	"namecheap":        func() (challenge.Provider, error) { return namecheap.NewDNSProvider() },
	"namedotcom":       func() (challenge.Provider, error) { return namedotcom.NewDNSProvider() },
	"namesilo":         func() (challenge.Provider, error) { return namesilo.NewDNSProvider() },
	"namesurfer":       func() (challenge.Provider, error) { return namesurfer.NewDNSProvider() },
	"nearlyfreespeech": func() (challenge.Provider, error) { return nearlyfreespeech.NewDNSProvider() },
	"nederhost":        func() (challenge.Provider, error) { return nederhost.NewDNSProvider() },
	"neodigit":         func() (challenge.Provider, error) { return neodigit.NewDNSProvider() },
	"netcup":           func() (challenge.Provider, error) { return netcup.NewDNSProvider() },
	"netcupv1":         func() (challenge.Provider, error) { return netcupv1.NewDNSProvider() },
	"netlify":          func() (challenge.Provider, error) { return netlify.NewDNSProvider() },
	"netnod":           func() (challenge.Provider, error) { return netnod.NewDNSProvider() },
	"nexdns":           func() (challenge.Provider, error) { return nexdns.NewDNSProvider() },
	"ngenix":           func() (challenge.Provider, error) { return ngenix.NewDNSProvider() },
	"nicmanager":       func() (challenge.Provider, error) { return nicmanager.NewDNSProvider() },
	"nicru":            func() (challenge.Provider, error) { return nicru.NewDNSProvider() },
	"nifcloud":         func() (challenge.Provider, error) { return nifcloud.NewDNSProvider() },
	"njalla":           func() (challenge.Provider, error) { return njalla.NewDNSProvider() },
	"nodion":           func() (challenge.Provider, error) { return nodion.NewDNSProvider() },
	"nordname":         func() (challenge.Provider, error) { return nordname.NewDNSProvider() },
	"ns1":              func() (challenge.Provider, error) { return ns1.NewDNSProvider() },
	"octenium":         func() (challenge.Provider, error) { return octenium.NewDNSProvider() },
	"omglol":           func() (challenge.Provider, error) { return omglol.NewDNSProvider() },
	"onecloudru":       func() (challenge.Provider, error) { return onecloudru.NewDNSProvider() },
	"onlinenet":        func() (challenge.Provider, error) { return onlinenet.NewDNSProvider() },
	"openprovider":     func() (challenge.Provider, error) { return openprovider.NewDNSProvider() },
	"opusdns":          func() (challenge.Provider, error) { return opusdns.NewDNSProvider() },
	"otc":              func() (challenge.Provider, error) { return otc.NewDNSProvider() },
	"ovh":              func() (challenge.Provider, error) { return ovh.NewDNSProvider() },
	"pdns":             func() (challenge.Provider, error) { return pdns.NewDNSProvider() },
	"plesk":            func() (challenge.Provider, error) { return plesk.NewDNSProvider() },
	"pointdns":         func() (challenge.Provider, error) { return pointdns.NewDNSProvider() },
	"porkbun":          func() (challenge.Provider, error) { return porkbun.NewDNSProvider() },
	"poweradmin":       func() (challenge.Provider, error) { return poweradmin.NewDNSProvider() },
	"primedns":         func() (challenge.Provider, error) { return primedns.NewDNSProvider() },
	"rackspace":        func() (challenge.Provider, error) { return rackspace.NewDNSProvider() },
	"rage4":            func() (challenge.Provider, error) { return rage4.NewDNSProvider() },
	"rainyun":          func() (challenge.Provider, error) { return rainyun.NewDNSProvider() },
	"rcodezero":        func() (challenge.Provider, error) { return rcodezero.NewDNSProvider() },
	"regru":            func() (challenge.Provider, error) { return regru.NewDNSProvider() },
	"rimuhosting":      func() (challenge.Provider, error) { return rimuhosting.NewDNSProvider() },
	"route53":          func() (challenge.Provider, error) { return route53.NewDNSProvider() },
	"safedns":          func() (challenge.Provider, error) { return safedns.NewDNSProvider() },
	"scaleway":         func() (challenge.Provider, error) { return scaleway.NewDNSProvider() },
	"scannet":          func() (challenge.Provider, error) { return scannet.NewDNSProvider() },
	"selectel":         func() (challenge.Provider, error) { return selectel.NewDNSProvider() },
	"selfhostde":       func() (challenge.Provider, error) { return selfhostde.NewDNSProvider() },
	"selfhostdev2":     func() (challenge.Provider, error) { return selfhostdev2.NewDNSProvider() },
	"servercow":        func() (challenge.Provider, error) { return servercow.NewDNSProvider() },
	"shellrent":        func() (challenge.Provider, error) { return shellrent.NewDNSProvider() },
	"simply":           func() (challenge.Provider, error) { return simply.NewDNSProvider() },
	"sonic":            func() (challenge.Provider, error) { return sonic.NewDNSProvider() },
	"spaceship":        func() (challenge.Provider, error) { return spaceship.NewDNSProvider() },
	"stackpath":        func() (challenge.Provider, error) { return stackpath.NewDNSProvider() },
	"syse":             func() (challenge.Provider, error) { return syse.NewDNSProvider() },
	"technitium":       func() (challenge.Provider, error) { return technitium.NewDNSProvider() },
	"tele3":            func() (challenge.Provider, error) { return tele3.NewDNSProvider() },
	"timewebcloud":     func() (challenge.Provider, error) { return timewebcloud.NewDNSProvider() },
	"todaynic":         func() (challenge.Provider, error) { return todaynic.NewDNSProvider() },
	"transip":          func() (challenge.Provider, error) { return transip.NewDNSProvider() },
	"uniteddomains":    func() (challenge.Provider, error) { return uniteddomains.NewDNSProvider() },
	"variomedia":       func() (challenge.Provider, error) { return variomedia.NewDNSProvider() },
	"veesp":            func() (challenge.Provider, error) { return veesp.NewDNSProvider() },
	"vegadns":          func() (challenge.Provider, error) { return vegadns.NewDNSProvider() },
	"vercel":           func() (challenge.Provider, error) { return vercel.NewDNSProvider() },
	"versio":           func() (challenge.Provider, error) { return versio.NewDNSProvider() },
	"vinyldns":         func() (challenge.Provider, error) { return vinyldns.NewDNSProvider() },
	"virtualname":      func() (challenge.Provider, error) { return virtualname.NewDNSProvider() },
	"vkcloud":          func() (challenge.Provider, error) { return vkcloud.NewDNSProvider() },
	"vscale":           func() (challenge.Provider, error) { return vscale.NewDNSProvider() },
	"vultr":            func() (challenge.Provider, error) { return vultr.NewDNSProvider() },
	"wannafind":        func() (challenge.Provider, error) { return wannafind.NewDNSProvider() },
	"webglobe":         func() (challenge.Provider, error) { return webglobe.NewDNSProvider() },
	"webnamesca":       func() (challenge.Provider, error) { return webnamesca.NewDNSProvider() },
	"webnamesru":       func() (challenge.Provider, error) { return webnamesru.NewDNSProvider() },
	"websupport":       func() (challenge.Provider, error) { return websupport.NewDNSProvider() },
	"wedos":            func() (challenge.Provider, error) { return wedos.NewDNSProvider() },
	"westcn":           func() (challenge.Provider, error) { return westcn.NewDNSProvider() },
	"xinnet":           func() (challenge.Provider, error) { return xinnet.NewDNSProvider() },
	"yandex":           func() (challenge.Provider, error) { return yandex.NewDNSProvider() },
	"yandex360":        func() (challenge.Provider, error) { return yandex360.NewDNSProvider() },
	"zilore":           func() (challenge.Provider, error) { return zilore.NewDNSProvider() },
	"zoneedit":         func() (challenge.Provider, error) { return zoneedit.NewDNSProvider() },
	"zoneee":           func() (challenge.Provider, error) { return zoneee.NewDNSProvider() },
	"zonomi":           func() (challenge.Provider, error) { return zonomi.NewDNSProvider() },
}

// aliases are other names lego accepts for the same providers.
var aliases = map[string]string{
	"acme-dns":       "acmedns",
	"rfc2136":        "dnsupdate",
	"domainnameshop": "domeneshop",
	"webnames":       "webnamesru",
}
