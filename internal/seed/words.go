package seed

// The vocabulary the generator draws from. Display names are deliberately
// international; each has an ASCII slug for e-mail addresses.

type namePart struct{ display, slug string }

var firstNames = []namePart{
	{"Anna", "anna"}, {"Ben", "ben"}, {"Chloé", "chloe"}, {"David", "david"},
	{"Élodie", "elodie"}, {"Fatima", "fatima"}, {"Giulia", "giulia"},
	{"Hannah", "hannah"}, {"Ígor", "igor"}, {"Jürgen", "juergen"},
	{"Kenji", "kenji"}, {"Łukasz", "lukasz"}, {"María", "maria"},
	{"Nils", "nils"}, {"Olga", "olga"}, {"Priya", "priya"}, {"Quentin", "quentin"},
	{"Renée", "renee"}, {"Søren", "soren"}, {"Tomás", "tomas"}, {"Uma", "uma"},
	{"Vera", "vera"}, {"Wei", "wei"}, {"Xóchitl", "xochitl"}, {"Yusuf", "yusuf"},
	{"Zoë", "zoe"}, {"Ana-Maria", "anamaria"}, {"Jean-Luc", "jeanluc"},
	{"O'Brien", "obrien"}, {"Mary Ann", "maryann"},
}

var lastNames = []namePart{
	{"Andersen", "andersen"}, {"Ångström", "angstrom"}, {"Becker", "becker"},
	{"Çelik", "celik"}, {"Dubois", "dubois"}, {"Eriksson", "eriksson"},
	{"Fernández", "fernandez"}, {"García", "garcia"}, {"Hoffmann", "hoffmann"},
	{"Ivanova", "ivanova"}, {"Jensen", "jensen"}, {"Kowalski", "kowalski"},
	{"Lefèvre", "lefevre"}, {"Müller", "mueller"}, {"Nakamura", "nakamura"},
	{"Ødegård", "odegard"}, {"Papadopoulos", "papadopoulos"}, {"Rossi", "rossi"},
	{"Schröder", "schroeder"}, {"Tanaka", "tanaka"}, {"Van der Berg", "vanderberg"},
	{"Wiśniewski", "wisniewski"}, {"Yılmaz", "yilmaz"}, {"Zhang", "zhang"},
	{"Smith", "smith"}, {"Nguyễn", "nguyen"}, {"O'Connor", "oconnor"},
}

// specialCustomers take the first customer ids, so every scale has them.
var specialCustomers = []namePart{
	{"Zoë Ångström", "zoe.angstrom"},
	{"José Müller", "jose.mueller"},
	{"李小龙", "li.xiaolong"},
	{"Ørjan Ødegård", "orjan.odegard"},
	{"Siobhán Ní Bhriain", "siobhan.nibhriain"},
	{"Ἀριστοτέλης", "aristoteles"},
}

var emailDomains = []string{"example.com", "example.org", "mail.example.net", "example.co.uk"}

var emailTags = []string{"books", "news", "shop+promo"}

// addressLabels are the labels a customer's addresses choose from, distinct
// per customer.
var addressLabels = [...]string{"home", "work", "billing", "shipping", "other", "vacation"}

var streets = []string{
	"Main Street", "Østre Gade", "Rue de l'Église", "Hauptstraße", "Calle Mayor",
	"Via Roma", "Karl Johans gate", "ul. Floriańska", "Baker Street", "Rua Augusta",
	"Elm St.", "Boulevard Saint-Germain",
}

var line2s = []string{"Apt %d", "Suite %d", "#%d", "Flat %d, 2nd floor", "c/o Reception %d", "Bldg. %d / Dock B"}

type place struct{ city, postalCode, country string }

var places = []place{
	{"Springfield", "62704", "US"},
	{"Boston", "02108", "US"}, // leading zero
	{"London", "SW1A 1AA", "GB"},
	{"Paris", "75002", "FR"},
	{"München", "80331", "DE"},
	{"Tromsø", "9008", "NO"},
	{"São Paulo", "01310-100", "BR"},
	{"東京", "100-0005", "JP"},
	{"Zürich", "8001", "CH"},
	{"Reykjavík", "101", "IS"},
	{"Kraków", "31-001", "PL"},
	{"Toronto", "M5V 2T6", "CA"},
}

var authorCountries = []string{"US", "GB", "FR", "DE", "NO", "JP", "RU", "CO", "BR", "IN", "NG", "CN"}

type specialAuthor struct {
	name      string
	birthYear int32 // 0: NULL
	country   string
}

// specialAuthors take the first author ids (there are at least three).
var specialAuthors = []specialAuthor{
	{"Ørjan Ødegård", 1961, "NO"},
	{"Anonymous", 0, ""},
	{"村上 春樹", 1949, "JP"},
	{"Фёдор Достоевский", 1821, "RU"},
	{"Gabriel García Márquez", 1927, "CO"},
}

var titleAdjectives = []string{
	"Silent", "Crimson", "Lost", "Infinite", "Hidden", "Last", "Forgotten",
	"Quiet", "Électrique", "Bright", "Northern", "Hollow", "Golden", "Broken",
}

var titleNouns = []string{
	"Garden", "River", "Empire", "Algorithm", "Winter", "Lighthouse", "Archive",
	"Symphony", "Café", "Harbor", "Machine", "Orchard", "Station", "Cartographer",
}

// specialTitles take the first book ids (there are at least ten).
var specialTitles = []string{
	"C# in Depth",
	"Tom & Jerry: The #1 Guide",
	"Kafka on the Shore",
	"Ça va? Ünïcödé for Everyone",
	`"Quoted" Stories | Vol. 2`,
}

var tagWords = []string{
	"fiction", "science fiction", "non-fiction", "history", "young adult",
	"kids' books", "C#", "français", "poetry", "mystery", "graphic novel",
	"self-help", "sci-fi", "best seller", "space opera", "#booktok",
}

var bookFormats = []string{"hardcover", "paperback", "ebook", "audiobook"}

var languages = []string{"en", "fr", "de", "ja", "es", "no", "zh-Hant"}

var awards = []string{"Hugo", "Nebula", "Booker", "Prix Goncourt", "Nobel", "Pulitzer"}
