"""Look-alike letters the door classifier folds to the ASCII letter or digit they imitate.

Pairs of characters (look-alike, then its ASCII stand-in), taken from Unicode's
confusables data (UTS #39) for every entry whose prototype is one ASCII letter or digit,
kept only where NFKC and case-folding do not already give that character. Read by
``toolkit.core.doors`` on the first text or id that holds a letter outside its own small
table, so ASCII questions never load it.

``LETTERS`` (and ``TABLE``, by code point) are the hand-kept look-alikes that survive NFKC
and case-folding (Cyrillic, Greek, Latin small capitals); ``PAIRS`` the confusables data.
"""

PAIRS = (
    "×xıiƅbƍgƨ2ƽ5ǀlȝ3ȣ8ɑaɜ3ɡgɣyɩiɪiɯwʀrʋuʏyʒ3ʝjαaβbγyεeζzηhιiκkμmνnοoρpσcτt"
    "υuχxϝfϩ2ϳjϻmаaб6вbгrеeз3кkмmнhоoрpсcтtуyхxьbѕsіiјjѡwѵvүyһhҽeӏiӡ3ԁdԍgԛq"
    "ԝwաwգqզqհhոnռnսuտsցgքfօo۱l۵o۷v०o০o৪8৭9੦o੧9੪8૦oଃ8ଠo୦o୨9௦oంo౦oಂo೦oംoഠo൦o"
    "൭9ංo๐o໐oဝo၀oყyჿoሀuዐoᎠdᎡrᎢtᎥiᎩyᎪaᎫjᎬeᎱrᎳwᎷmᎻhᎽyᏀgᏂhᏃzᏎ4ᏏbᏒrᏔwᏕsᏙvᏚsᏞlᏟc"
    "ᏢpᏦkᏧdᏮ6ᏳgᏴbᐯvᑌuᑭpᑯdᑲbᒍjᒪlᒿ2ᕁxᕼhᕽxᖇrᖯbᖴfᗅaᗞdᗪdᗰmᗷb᙭x᙮xᚷxᛁlᛕkᛖmᴄcᴏoᴑoᴜu"
    "ᴠvᴡwᴢzᴦrᶃgᶌyẝfỿy℮e∣l∨v∪u⊤t⋁v⋃u⋿e⍳i⍴p⍺a⏽l│l╳x⟙t⤫x⤬x⨯xⲅrⲏhⲓlⲕkⲙmⲛnⲟoⲣpⲥc"
    "ⲧtⲩyⲭxⳋ9ⳍ3ⳑlⳓ6ⴸvⴹeⵏlⵔoⵕqⵝx〇oꓐbꓑpꓒdꓓdꓔtꓖgꓗkꓙjꓚcꓜzꓝfꓟmꓠnꓡlꓢsꓣrꓦvꓧhꓪwꓫxꓬy"
    "ꓮaꓰeꓲlꓳoꓴuꙅ2ꙇiꛟvꛯ2ꜱsꝛ2ꝫ3ꝯ9ꞙfꞟuꞵbꬲeꬵfꬽoꭇrꭈrꭎuꭒuꭓxꭚy𐊂b𐊆e𐊇f𐊊l𐊐x𐊒o𐊕p𐊖s𐊗t𐊠a"
    "𐊡b𐊢c𐊥f𐊫o𐊰m𐊱t𐊲y𐊴x𐋏h𐋵z𐌁b𐌂c𐌉l𐌑m𐌕t𐌗x𐌚8𐌠l𐌢x𐐬o𐐽c𐑃l𐑈s𐓜r𐓪o𐓶u𐓺7𐔓n𐔖o𐔘k𐔜c𐔝v𐔥f𐔦l𐔧x"
    "𑓐o𑜆v𑜊w𑜎w𑜏w𑣀v𑣁s𑣂f𑣃i𑣄y𑣆7𑣈o𑣉z𑣊3𑣌9𑣎e𑣏4𑣒l𑣕6𑣖9𑣗o𑣘u𑣛5𑣜t𑣠o𑣥z𑣦w𑣩c𑣬x𑣯w𑣲c𖼈v𖼊t𖼖l𖼨l"
    "𖼵r𖼺s𖼻3𖽀a𖽂u𖽃y𝈆3𝈍v𝈒7𝈓f𝈖r𝈪l🝌c🝨t"
)

# Look-alike letters that survive NFKC and case-folding, folded to the ASCII letter they
# imitate (Cyrillic, Greek, Latin small capitals and a few others).
LETTERS = {
    # Cyrillic
    "а": "a",
    "в": "b",
    "е": "e",
    "ё": "e",
    "з": "3",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "ѕ": "s",
    "і": "i",
    "ї": "i",
    "ј": "j",
    "һ": "h",
    "ԁ": "d",
    "ӏ": "l",
    "ԛ": "q",
    "ԝ": "w",
    "ɡ": "g",
    "ь": "b",
    "п": "n",
    "г": "r",
    "ց": "g",
    "օ": "o",
    "ս": "u",
    # Greek
    "α": "a",
    "β": "b",
    "γ": "y",
    "δ": "d",
    "ε": "e",
    "ζ": "z",
    "η": "n",
    "ι": "i",
    "κ": "k",
    "μ": "u",
    "ν": "v",
    "ο": "o",
    "ρ": "p",
    "σ": "o",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "ω": "w",
    "ϲ": "c",
    "ϳ": "j",
    # Latin small capitals and other look-alikes
    "ᴀ": "a",
    "ʙ": "b",
    "ᴄ": "c",
    "ᴅ": "d",
    "ᴇ": "e",
    "ғ": "f",
    "ɢ": "g",
    "ʜ": "h",
    "ɪ": "i",
    "ᴊ": "j",
    "ᴋ": "k",
    "ʟ": "l",
    "ᴍ": "m",
    "ɴ": "n",
    "ᴏ": "o",
    "ᴘ": "p",
    "ʀ": "r",
    "ꜱ": "s",
    "ᴛ": "t",
    "ᴜ": "u",
    "ᴠ": "v",
    "ᴡ": "w",
    "ʏ": "y",
    "ᴢ": "z",
    "ı": "i",
    "ȷ": "j",
    "ł": "l",
    "ø": "o",
    "đ": "d",
    "ħ": "h",
    "ŧ": "t",
}
# Look-alikes that are not letters, and letters the confusables data leaves out.
LETTERS.update({"๏": "o", "○": "o", "◯": "o", "⚬": "o", "⭘": "o", "ꭴ": "o"})
TABLE = {ord(k): v for k, v in LETTERS.items()}
