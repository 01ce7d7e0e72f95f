"""Vocabularies of the rule extractor: closed word lists and lookup tables (data only)."""

from __future__ import annotations

from types import MappingProxyType


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- vocabularies ------------------------------------------------------------------------------

DIETS = MappingProxyType({
    "vegetarian": "vegetarian", "vegan": "vegan", "pescatarian": "pescatarian",
    "pescetarian": "pescatarian", "keto": "keto", "paleo": "paleo", "halal": "halal",
    "kosher": "kosher", "plant-based": "plant-based", "plant based": "plant-based",
    "lacto-vegetarian": "lacto-vegetarian", "ovo-vegetarian": "ovo-vegetarian",
})
EDITORS = MappingProxyType({
    "vim": "Vim", "neovim": "Neovim", "nvim": "Neovim", "emacs": "Emacs", "vs code": "VS Code",
    "vscode": "VS Code", "visual studio code": "VS Code", "visual studio": "Visual Studio",
    "sublime text": "Sublime Text", "sublime": "Sublime Text", "atom": "Atom", "nano": "nano",
    "intellij idea": "IntelliJ IDEA", "intellij": "IntelliJ IDEA", "pycharm": "PyCharm",
    "webstorm": "WebStorm", "goland": "GoLand", "clion": "CLion", "rider": "Rider",
    "xcode": "Xcode", "android studio": "Android Studio", "helix": "Helix", "kakoune": "Kakoune",
    "zed": "Zed", "cursor": "Cursor", "notepad++": "Notepad++", "eclipse": "Eclipse",
    "netbeans": "NetBeans", "spacemacs": "Spacemacs", "doom emacs": "Doom Emacs",
})
LANGUAGES = _words(
    "english french spanish german italian portuguese chinese mandarin cantonese japanese korean "
    "russian arabic hindi bengali urdu punjabi turkish dutch swedish norwegian danish finnish "
    "icelandic polish czech slovak greek hebrew vietnamese thai indonesian malay tagalog filipino "
    "swahili persian farsi ukrainian romanian hungarian catalan basque galician irish welsh latin "
    "esperanto serbian croatian bosnian bulgarian slovenian estonian latvian lithuanian tamil "
    "telugu marathi gujarati kannada malayalam nepali sinhala burmese khmer lao mongolian kazakh "
    "uzbek georgian armenian albanian macedonian afrikaans zulu xhosa amharic yoruba igbo hausa "
    "somali maltese luxembourgish yiddish")
LANGUAGE_MODIFIERS = _words(
    "fluent fluently native natively basic conversational some good decent broken passable "
    "intermediate advanced beginner limited okay ok little bit rusty well perfect perfectly "
    "a of bit")
SPECIES = MappingProxyType({
    **{s: s for s in _words(
        "dog cat rabbit bunny hamster parrot bird budgie fish goldfish turtle tortoise snake "
        "lizard gecko ferret horse pony chicken hedgehog rat mouse gerbil chinchilla iguana "
        "axolotl frog pig goat cockatiel canary puppy kitten duck")},
    "guinea pig": "guinea pig",
})
PLURALS = MappingProxyType({
    **{s + "s": s for s in SPECIES}, "bunnies": "bunny", "ponies": "pony", "puppies": "puppy",
    "mice": "mouse", "fish": "fish", "goldfish": "goldfish", "fishes": "fish",
})
PET_MODIFIERS = _words(
    "little big small tiny old young new baby rescue rescued pet male female black white brown "
    "grey gray orange ginger tabby fluffy cute sweet lazy senior giant golden spotted striped "
    "adorable beautiful lovely crazy adopted two-year-old")
NUMBERS = MappingProxyType({
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
})
JOB_HEADS = _words(
    "engineer developer dev programmer coder designer architect scientist researcher analyst "
    "consultant manager director administrator admin accountant auditor lawyer attorney "
    "paralegal teacher tutor lecturer professor instructor educator principal student intern "
    "nurse doctor physician surgeon dentist pharmacist therapist psychologist psychiatrist "
    "counselor counsellor paramedic midwife vet veterinarian chef baker barista bartender waiter "
    "waitress cashier pilot electrician plumber carpenter mechanic technician welder builder "
    "farmer gardener photographer videographer filmmaker writer author novelist journalist "
    "reporter editor translator interpreter musician composer singer artist illustrator animator "
    "actor actress dancer producer marketer salesperson recruiter entrepreneur founder co-founder "
    "cofounder ceo cto cfo coo cmo vp pm librarian firefighter officer soldier detective "
    "economist mathematician statistician physicist chemist biologist geologist astronomer clerk "
    "secretary receptionist assistant coach trainer freelancer contractor caregiver nanny "
    "housekeeper janitor lifeguard realtor broker banker trader sre specialist coordinator "
    "supervisor strategist surveyor optometrist radiologist postdoc copywriter "
    "sysadmin hairdresser stylist tester practitioner hygienist owner president")
EXEC_TITLES = _words("ceo cto cfo coo cmo founder co-founder cofounder owner president chair")
TITLE_REJECT = _words(
    "former ex ex- retired aspiring future wannabe would-be amateur hobby hobbyist failed bad "
    "terrible awful good great decent lousy horrible poor excellent amazing fake pretend "
    "unemployed huge big slow fast quick natural born closet weekend occasional casual secret "
    "free lazy shy messy")

# Lowercase words allowed inside a proper-noun phrase when a capitalised word follows.
PLACE_LINKS = _words(
    "de del della da das do dos du di la le les los las van von der den of upon on am im sur en "
    "y al el au aux")
ORG_LINKS = _words("of de la & the for du des der")
NAME_LINKS = _words("van von de del della da di du der den dos das la le bin ibn al el ter ten")
PROPER_STOP = _words(
    "I I'm It This That There Here My Your A An Me We You He She They Not None Nothing No "
    "Unknown Secret Private Irrelevant Anonymous Nobody Somebody Someone Everyone Anyone ASAP "
    "Maybe Later Now Back Anytime Soon Please Ok Okay OK Sir Madam Yes Hey Hi Hello Mr Mrs Ms "
    "Dr Dr. Mr. Mrs. Ms.")
VAGUE = _words(
    "you your yours u ur it its it's this that these those them him her his their our my me "
    "myself us what how when where why who which whatever everything something anything nothing "
    "all both some any here there one ones each lots lot much many more most "
    "things stuff people way idea fact answer answers response responses reply suggestion plan "
    "thought sound look way")
# Words that make a list item a clause or a reference to the conversation ("them", "this").
CLAUSE_WORDS = _words(
    "is are was were am be been it it's its they they're them he she we you your yours u ur i "
    "i'm me us our this that that's these those which who")
CLAUSE_START = CLAUSE_WORDS | _words(
    "but so 'cause cause cuz because though although as since then especially plus")
DANGLING = _words("to of in on at with for from about the a an my and or by into")
SAY_VERBS = _words("think say know believe see hear ask tell imagine mention note add be have")
NOT_ALLERGENS = _words("food seasonal bad severe mild serious terrible slight skin drug few "
                       "some many several an a")
BINOMIALS = (
    "rock and roll", "mac and cheese", "macaroni and cheese", "fish and chips", "salt and pepper",
    "peanut butter and jelly", "bread and butter", "drum and bass", "dungeons and dragons",
    "rhythm and blues", "sweet and sour", "arts and crafts", "hide and seek", "black and white",
    "rock 'n' roll", "pros and cons", "ham and cheese", "milk and cookies", "r and b",
)


# --- value parsers -----------------------------------------------------------------------------
